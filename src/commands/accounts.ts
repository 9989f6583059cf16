import { randomBytes } from 'node:crypto';
import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import { accountDecider, accountStream, type AccountCommand, type AccountSettings, type SmsSettings } from '../domain/accounts/account.js';

/** The settings as the API shows them: `retentionDays` only when one is set (unset: everything is kept). */
export type SettingsView = AccountSettings;
export type SettingsPatch = Extract<AccountCommand, { kind: 'changeSettings' }>['patch'];
import { hashPassword, passwordStamp, verifyPassword } from '../domain/accounts/password.js';
import { userDecider, userStream } from '../domain/accounts/user.js';
import { fold } from '../domain/decider.js';
import { AppError, forbidden, unauthorized } from '../domain/errors.js';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore, type Position } from '../ports/event-store.js';
import type { SessionTokens } from '../ports/session-tokens.js';
import { execute } from './execute.js';
import { callerMetadata, type Caller } from './caller.js';
import { executeTogether } from './execute-together.js';
import { accountRow, userCredentials } from '../read-models/accounts.js';
import type { WaitForProjection } from './read-your-writes.js';
import { readModelBehind } from '../projections/waiter.js';

export const DEFAULT_ACCOUNT_ID = 'default';

export function settingsView(row: Record<string, any>): SettingsView {
  return {
    dailySendCap: row.daily_send_cap,
    emailProvider: row.email_provider,
    tracking: row.tracking,
    providerRatePerSecond: row.provider_rate_per_second ?? null,
    ...(row.retention_days !== null && row.retention_days !== undefined ? { retentionDays: row.retention_days } : {}),
  };
}

export function createAccountCommands(deps: { eventStore: EventStore; db: Db; waitFor: WaitForProjection; jwt: SessionTokens }) {
  const { eventStore } = deps;

  /**
   * An account and its owner, written as one step (executeTogether): the owner's user stream, which
   * takes the email and lets its owner log in, never exists without the account it names (before,
   * signup appended the user first, and a failed account append left a taken email whose every
   * admin call answered 503). The account goes first: a store that writes stream by stream and
   * stops in between leaves an account nothing reaches, the email still free.
   */
  async function createAccountWithOwner(input: {
    accountId: string;
    name: string;
    email: string;
    password: string;
    commandId: string;
    metadata?: EventMetadata;
  }) {
    const now = new Date().toISOString();
    const email = input.email.trim().toLowerCase();
    const userId = createId();
    const passwordHash = await hashPassword(input.password);
    const [account, user] = await executeTogether(
      eventStore,
      [
        { decider: accountDecider, command: { kind: 'create', accountId: input.accountId, name: input.name, now }, streamId: accountStream(input.accountId) },
        {
          decider: userDecider,
          command: { userId, accountId: input.accountId, email, passwordHash, role: 'owner', createdAt: now },
          streamId: userStream(email),
        },
      ],
      { commandId: input.commandId, metadata: { actor: 'system', ...input.metadata } },
    );
    return { account, user, userId, passwordHash };
  }

  /** A signed-in user as the accounts read model has them; 503 while it lags behind their registration. */
  async function knownUser(userId: string) {
    const user = await userCredentials(deps.db, userId);
    if (!user) throw readModelBehind('accounts');
    return user;
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
      // The account names its owner, so that a first boot which stopped between the two (possible
      // only on a store without appendMany) is completed by the next boot, with the same command.
      const recorded = existing[0]?.metadata as { ownerEmail?: unknown; commandId?: unknown } | undefined;
      const ownerEmail = typeof recorded?.ownerEmail === 'string' ? recorded.ownerEmail : undefined;
      if (existing.length && (!ownerEmail || (await eventStore.readStream(userStream(ownerEmail))).length)) return { created: false };
      const email = ownerEmail ?? adminEmail.trim().toLowerCase();
      const password = adminPassword ?? randomBytes(12).toString('base64url');
      try {
        const { user, userId } = await createAccountWithOwner({
          accountId: DEFAULT_ACCOUNT_ID,
          name: 'default',
          email,
          password,
          commandId: typeof recorded?.commandId === 'string' ? recorded.commandId : `bootstrap-${createId()}`,
          metadata: { ownerEmail: email },
        });
        // A concurrent boot may have written the owner with its own password: only the one whose
        // user is stored reports a generated password.
        const [owner] = await eventStore.readStream(userStream(email));
        if (owner?.data.userId !== userId) return { created: false };
        return { created: true, generatedPassword: adminPassword ? undefined : password, position: user.position };
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError || (err instanceof AppError && err.status === 409)) return { created: false };
        throw err;
      }
    },

    /** `from`: where the request came from, recorded with the account's first events for the audit trail. */
    async signup(input: { accountName: string; email: string; password: string }, from: Omit<Caller, 'actor'> = { clientIp: null }) {
      const accountId = createId();
      const { user, userId, passwordHash } = await createAccountWithOwner({
        accountId,
        name: input.accountName,
        email: input.email,
        password: input.password,
        commandId: `signup-${accountId}`,
        metadata: callerMetadata({ actor: 'system', ...from }),
      });
      // the owner is written last (or with the account): where it is, the account is too
      await deps.waitFor('accounts', user.position);
      const { token } = await deps.jwt.issue({ userId, accountId, passwordStamp: passwordStamp(passwordHash) });
      return { accountId, token };
    },

    /** Checks the password; a success is recorded (UserSignedIn) with the client's address for the audit trail. */
    async login(email: string, password: string, from: Omit<Caller, 'actor'> = { clientIp: null }) {
      // The whole stream: a password reset appends a new hash after the registration.
      const history = await eventStore.readStream(userStream(email));
      const { user } = fold(userDecider, history);
      // Hash even for unknown users so response time does not reveal which emails exist.
      const stored = user?.passwordHash ?? 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
      const ok = await verifyPassword(password, stored);
      if (!user || !ok) throw unauthorized('invalid email or password');
      await execute(userDecider, { kind: 'signIn', now: new Date().toISOString() }, {
        eventStore,
        streamId: userStream(email),
        metadata: callerMetadata({ actor: `user:${user.userId}`, ...from }),
        history,
      });
      return deps.jwt.issue({ userId: user.userId, accountId: user.accountId, passwordStamp: passwordStamp(user.passwordHash) });
    },

    /**
     * Ends the session `token` is of, in every process (UserSignedOut), once the users read model holds
     * it; nothing for a token that is no session of this service, or one from before sessions had ids.
     */
    async signOut(token: string, from: Omit<Caller, 'actor'> = { clientIp: null }): Promise<void> {
      const session = await deps.jwt.verify(token);
      if (!session?.sessionId || !session.expiresAt) return;
      const { email } = await knownUser(session.userId);
      const result = await execute(userDecider, { kind: 'signOut', sessionId: session.sessionId, sessionExpiresAt: session.expiresAt, now: new Date().toISOString() }, {
        eventStore,
        streamId: userStream(email),
        metadata: callerMetadata({ actor: `user:${session.userId}`, ...from }),
      });
      await deps.waitFor('accounts', result.position);
    },

    /** The login email of a signed-in user (the key its password attempts are throttled by). */
    async loginEmail(userId: string): Promise<string> {
      return (await knownUser(userId)).email;
    },

    /**
     * A user's own password change: the current password proves it is them (a wrong one is a 403, a
     * failed password attempt to the caller's throttle), and every session before it ends. Answers a
     * new session token, so the one that asked stays signed in.
     */
    async changePassword(userId: string, caller: Caller, currentPassword: string, newPassword: string) {
      const { email } = await knownUser(userId);
      const history = await eventStore.readStream(userStream(email));
      const { user } = fold(userDecider, history);
      if (!user || !(await verifyPassword(currentPassword, user.passwordHash))) throw forbidden('currentPassword: this is not your current password');
      const passwordHash = await hashPassword(newPassword);
      const result = await execute(userDecider, { kind: 'changePassword', email, passwordHash, provenHash: user.passwordHash, now: new Date().toISOString() }, {
        eventStore,
        streamId: userStream(email),
        metadata: callerMetadata(caller),
        history,
      });
      // the new token is checked against the users read model: it must hold the new hash first
      await deps.waitFor('accounts', result.position);
      return deps.jwt.issue({ userId: user.userId, accountId: user.accountId, passwordStamp: passwordStamp(passwordHash) });
    },

    async getSettings(accountId: string) {
      return settingsView(await accountRow(deps.db, accountId));
    },

    async changeSettings(accountId: string, caller: Caller, patch: SettingsPatch): Promise<SettingsView> {
      const result = await execute(accountDecider, { kind: 'changeSettings', patch, now: new Date().toISOString() }, {
        eventStore,
        streamId: accountStream(accountId),
        metadata: callerMetadata(caller),
      });
      await deps.waitFor('accounts', result.position);
      // settings recorded before the provider rate existed have no such field: no limit
      return { providerRatePerSecond: null, ...result.state.settings };
    },

    async getSmsSettings(accountId: string): Promise<SmsSettings> {
      return (await accountRow(deps.db, accountId, ['sms'])).sms;
    },

    async changeSmsSettings(accountId: string, caller: Caller, sms: SmsSettings) {
      const result = await execute(accountDecider, { kind: 'changeSms', sms, now: new Date().toISOString() }, {
        eventStore,
        streamId: accountStream(accountId),
        metadata: callerMetadata(caller),
      });
      await deps.waitFor('accounts', result.position);
      return result.state.sms;
    },
  };
}
export type AccountCommands = ReturnType<typeof createAccountCommands>;
