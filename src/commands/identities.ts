import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import { identityDecider, identityStream, type IdentityKind } from '../domain/accounts/identity.js';
import { conflict, notFound } from '../domain/errors.js';
import type { EventStore } from '../ports/event-store.js';
import { ProviderError, type EmailProvider } from '../ports/email-provider.js';
import type { EmailProviderKind } from '../domain/accounts/account.js';
import { execute } from './execute.js';
import { callerMetadata, type Caller } from './caller.js';
import { accountRow } from '../read-models/accounts.js';
import { hasIdentity, heldByAnotherAccount, identitiesOf, identityRow } from '../read-models/identities.js';
import type { WaitForProjection } from './read-your-writes.js';

export function identityView(row: Record<string, any>) {
  return {
    id: row.id,
    [row.kind === 'domain' ? 'domain' : 'email']: row.value,
    dkim: row.dkim,
    spf: row.spf,
    mailFrom: row.mail_from,
    verified: row.verified,
    dnsRecords: row.dns_records,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Verified domains (DKIM + SPF + MAIL FROM) and single sender identities, checked through the account's provider. */
export function createIdentityCommands(deps: {
  eventStore: EventStore;
  db: Db;
  waitFor: WaitForProjection;
  emailProviderFor(kind: EmailProviderKind): EmailProvider;
}) {
  async function provider(accountId: string) {
    const row = await accountRow(deps.db, accountId, ['email_provider']);
    return deps.emailProviderFor(row.email_provider);
  }

  async function read(accountId: string, id: string) {
    const row = await identityRow(deps.db, accountId, id);
    if (!row) throw notFound(`${id} not found`);
    return identityView(row);
  }

  return {
    async add(accountId: string, caller: Caller, kind: IdentityKind, rawValue: string) {
      const value = rawValue.trim().toLowerCase();
      if (await hasIdentity(deps.db, accountId, kind, value)) throw conflict(`${value} already exists`);
      // Not a claim on another account's verified sender: SES would answer its status to this one too.
      if (await heldByAnotherAccount(deps.db, accountId, kind, value)) throw conflict(`${value} is registered to another account`);
      const checks = await (await provider(accountId)).createIdentity(value);
      const id = createId();
      const result = await execute(
        identityDecider,
        { kind: 'add', id, accountId, identityKind: kind, value, now: new Date().toISOString(), checks },
        { eventStore: deps.eventStore, streamId: identityStream(id), metadata: callerMetadata(caller) },
      );
      await deps.waitFor('accounts', result.position);
      return read(accountId, id);
    },

    async verify(accountId: string, caller: Caller, kind: IdentityKind, id: string) {
      const row = await identityRow(deps.db, accountId, id, kind);
      if (!row) throw notFound(`${id} not found`);
      // Another account verified it, or a domain above it, since: the provider would answer that one's
      // status. Of two accounts holding one pending domain, the first to verify it holds it.
      if (await heldByAnotherAccount(deps.db, accountId, kind, row.value)) throw conflict(`${row.value} is registered to another account`);
      const p = await provider(accountId);
      // Added under another provider (the account switched since): register it with this one.
      const checks = await p.getIdentityStatus(row.value).catch((err) => {
        if (err instanceof ProviderError && err.code === 'NotFoundException') return p.createIdentity(row.value);
        throw err;
      });
      const result = await execute(
        identityDecider,
        { kind: 'check', id, accountId, now: new Date().toISOString(), checks },
        { eventStore: deps.eventStore, streamId: identityStream(id), metadata: callerMetadata(caller) },
      );
      await deps.waitFor('accounts', result.position);
      return read(accountId, id);
    },

    /** No longer a sender of the account: sends from it are refused from the next one on. */
    async remove(accountId: string, caller: Caller, kind: IdentityKind, id: string): Promise<void> {
      if (!(await identityRow(deps.db, accountId, id, kind))) throw notFound(`${id} not found`);
      const result = await execute(
        identityDecider,
        { kind: 'remove', id, accountId, now: new Date().toISOString() },
        { eventStore: deps.eventStore, streamId: identityStream(id), metadata: callerMetadata(caller) },
      );
      await deps.waitFor('accounts', result.position);
    },

    async list(accountId: string, kind: IdentityKind) {
      return (await identitiesOf(deps.db, accountId, kind)).map(identityView);
    },
  };
}
export type IdentityCommands = ReturnType<typeof createIdentityCommands>;
