import type { Db } from '../adapters/db/knex.js';
import type { IdentityKind } from '../domain/accounts/identity.js';
import { domainAndParents, emailDomain } from '../domain/email/address.js';

/** One of an account's sending identities (of one kind when `kind` is given), or undefined. */
export const identityRow = (db: Db, accountId: string, id: string, kind?: IdentityKind): Promise<Record<string, any> | undefined> =>
  db('identities').where({ id, account_id: accountId, ...(kind ? { kind } : {}) }).first();

/** Whether the account already has this domain or address. */
export const hasIdentity = async (db: Db, accountId: string, kind: IdentityKind, value: string): Promise<boolean> =>
  Boolean(await db('identities').where({ account_id: accountId, kind, value }).first('id'));

/**
 * Whether another account holds this identity, or a domain it is under (for an address, its domain or
 * one above; for a domain, one above), verified through a provider that delivers: the provider's
 * identities are shared by every account sending through one provider account, which would answer
 * their status to this one, and a provider that has verified a domain lets the names under it send
 * too. A claim nobody has proved (pending, or verified by the sandbox, which verifies anything) holds
 * nothing: counted, it would let any signup lock a domain's owner out of it.
 */
export const heldByAnotherAccount = async (db: Db, accountId: string, kind: IdentityKind, value: string): Promise<boolean> =>
  Boolean(
    await db('identities as i')
      .join('accounts as a', 'a.id', 'i.account_id')
      .whereNot('i.account_id', accountId)
      .where('i.verified', true)
      .whereNot('a.email_provider', 'sandbox')
      .andWhere((q) => {
        q.where({ 'i.kind': kind, 'i.value': value });
        q.orWhere((d) => d.where('i.kind', 'domain').whereIn('i.value', domainAndParents(kind === 'email' ? emailDomain(value) : value)));
      })
      .first('i.id'),
  );

/** An account's identities of one kind, oldest first. */
export const identitiesOf = (db: Db, accountId: string, kind: IdentityKind): Promise<Record<string, any>[]> =>
  db('identities').where({ account_id: accountId, kind }).orderBy('created_at');

/** Whether a (normalised) sender address may send: its domain verified in full, or the address itself. */
export const isVerifiedSender = async (db: Db, accountId: string, sender: string): Promise<boolean> =>
  Boolean(
    await db('identities')
      .where({ account_id: accountId, verified: true })
      .andWhere((q) => q.where({ kind: 'domain', value: emailDomain(sender) }).orWhere({ kind: 'email', value: sender }))
      .first('id'),
  );
