import { randomBytes } from 'node:crypto';
import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import { accountDecider, accountStream, type AccountSettings, type SmsSettings } from '../domain/accounts/account.js';
import { hashPassword, verifyPassword } from '../domain/accounts/password.js';
import { userDecider, userStream } from '../domain/accounts/user.js';
import { fold } from '../domain/decider.js';
import { AppError, unauthorized } from '../domain/errors.js';
import { WrongExpectedRevisionError, type EventStore, type Position } from '../ports/event-store.js';
import type { JwtIssuer } from '../http/jwt.js';
import { execute } from './execute.js';
import { accountRow } from './account-row.js';
import type { WaitForProjection } from './read-your-writes.js';

export const DEFAULT_ACCOUNT_ID = 'default';

export function settingsView(row: Record<string, any>): AccountSettings {
  return { dailySendCap: row.daily_send_cap, emailProvider: row.email_provider, tracking: row.tracking };
}

export function createAccountCommands(deps: { eventStore: EventStore; db: Db; waitFor: WaitForProjection; jwt: JwtIssuer }) {
  const { eventStore } = deps;

  async function createAccount(accountId: string, name: string) {
    return execute(accountDecider, { kind: 'create', accountId, name, now: new Date().toISOString() }, {
      eventStore,
      streamId: accountStream(accountId),
      commandId: `create-account-${accountId}`,
      metadata: { actor: 'system' },
    });
  }

  async function registerUser(accountId: string, email: string, password: string, role: 'owner' | 'admin') {
    const userId = createId();
    return execute(
      userDecider,
      { userId, accountId, email: email.trim().toLowerCase(), passwordHash: await hashPassword(password), role, createdAt: new Date().toISOString() },
      { eventStore, streamId: userStream(email), metadata: { actor: 'system' } },
    );
  }

  return {
    /**
     * First boot: account `default` and its owner. Safe to run from several processes at once: the
     * event store's stream checks make the second run a no-op. Returns the generated password, if any.
     */
    async bootstrap(
      adminEmail: string,
      adminPassword?: string,
    ): Promise<{ created: boolean; generatedPassword?: string; position?: Position }> {
      const existing = await eventStore.readStream(accountStream(DEFAULT_ACCOUNT_ID));
      if (existing.length) return { created: false };
      const password = adminPassword ?? randomBytes(12).toString('base64url');
      try {
        await createAccount(DEFAULT_ACCOUNT_ID, 'default');
        const user = await registerUser(DEFAULT_ACCOUNT_ID, adminEmail, password, 'owner');
        return { created: true, generatedPassword: adminPassword ? undefined : password, position: user.position };
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError || (err instanceof AppError && err.status === 409)) return { created: false };
        throw err;
      }
    },

    async signup(input: { accountName: string; email: string; password: string }) {
      const accountId = createId();
      // Reserve the login email first: a duplicate fails before any account is created.
      const user = await registerUser(accountId, input.email, input.password, 'owner');
      const account = await createAccount(accountId, input.accountName);
      await deps.waitFor('accounts', account.position);
      const { token } = await deps.jwt.issue({ userId: user.state.user!.userId, accountId });
      return { accountId, token };
    },

    async login(email: string, password: string) {
      // The whole stream: a password reset appends a new hash after the registration.
      const { user } = fold(userDecider, await eventStore.readStream(userStream(email)));
      // Hash even for unknown users so response time does not reveal which emails exist.
      const stored = user?.passwordHash ?? 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
      const ok = await verifyPassword(password, stored);
      if (!user || !ok) throw unauthorized('invalid email or password');
      return deps.jwt.issue({ userId: user.userId, accountId: user.accountId });
    },

    async getSettings(accountId: string) {
      return settingsView(await accountRow(deps.db, accountId));
    },

    async changeSettings(accountId: string, actor: string, patch: Partial<AccountSettings>) {
      const result = await execute(accountDecider, { kind: 'changeSettings', patch, now: new Date().toISOString() }, {
        eventStore,
        streamId: accountStream(accountId),
        metadata: { actor },
      });
      await deps.waitFor('accounts', result.position);
      return result.state.settings;
    },

    async getSmsSettings(accountId: string): Promise<SmsSettings> {
      return (await accountRow(deps.db, accountId, ['sms'])).sms;
    },

    async changeSmsSettings(accountId: string, actor: string, sms: SmsSettings) {
      const result = await execute(accountDecider, { kind: 'changeSms', sms, now: new Date().toISOString() }, {
        eventStore,
        streamId: accountStream(accountId),
        metadata: { actor },
      });
      await deps.waitFor('accounts', result.position);
      return result.state.sms;
    },
  };
}
export type AccountCommands = ReturnType<typeof createAccountCommands>;
