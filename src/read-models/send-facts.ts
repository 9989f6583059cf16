import { query, type Db } from '../adapters/db/knex.js';
import type { EmailQueued } from '../domain/messages/events.js';
import type { Principal } from '../domain/principal.js';
import { keyColumnsSql, type CheckedKeyRow } from './api-keys.js';

/**
 * The facts the send rules decide over, each read for all the sends arriving together in one
 * statement across several read models (the key, the account, suppressions, identities): the send's
 * hot path, where one round trip instead of four is most of its speed.
 */

export interface EmailSendFactsRow extends CheckedKeyRow {
  /** the sender's account, key and key cap: the presented key's, or the known principal's */
  sender_account: string | null;
  sender_key: string | null;
  key_cap: number | null;
  /** false when the sender's account has no row (cannot happen through the API) */
  account_found: boolean;
  daily_send_cap: number;
  email_provider: EmailQueued['data']['provider'];
  tracking: EmailQueued['data']['tracking'];
  /** a campaign's contact still on record and subscribed; true for a send to no contact */
  contact_subscribed: boolean;
  suppressed: boolean;
  verified_sender: boolean;
}

/** Whether a sender may send, as SQL: its domain verified in full, or the address as a single sender. */
const verifiedSender = (account: string, domain: string, sender: string) => `EXISTS (SELECT 1 FROM identities i WHERE i.account_id = ${account} AND i.verified
              AND ((i.kind = 'domain' AND i.value = ${domain}) OR (i.kind = 'email' AND i.value = ${sender})))`;

// What the send rules (admitEmailSend) are decided over, for all sends arriving together in one
// statement: the presented key (checked by keyRefusal, as every request's is), the sender's account,
// whether the recipient is suppressed and whether the sender is verified (its domain in full, or the
// address as a single sender). A send whose sender is already known (a principal) comes without a
// key, and its account, key and key cap come with it: a row's key columns are all null without a key.
// A campaign's message names its contact, read here as it is when the message is queued: still on
// record (an erasure drops it) and subscribed.
const EMAIL_SEND_FACTS = `
  WITH r AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[])
      WITH ORDINALITY AS r (key_hash, account_id, key_id, key_cap, person, domain, sender, contact_id, i)
  ),
  who AS (
    SELECT r.i, r.person, r.domain, r.sender, r.contact_id, ${keyColumnsSql('k')},
      coalesce(k.account_id, r.account_id) AS sender_account,
      coalesce(k.id, r.key_id) AS sender_key,
      coalesce(k.daily_limit, r.key_cap) AS key_cap
    FROM r LEFT JOIN api_keys k ON k.key_hash = r.key_hash
  )
  SELECT w.id, w.account_id, w.scopes, w.daily_limit, w.revoked_at, w.expires_at, w.ip_allowlist, w.sender_account, w.sender_key, w.key_cap,
    a.id IS NOT NULL AS account_found, a.daily_send_cap, a.email_provider, a.tracking,
    w.contact_id IS NULL OR EXISTS (SELECT 1 FROM contacts c WHERE c.account_id = a.id AND c.id = w.contact_id AND c.status = 'subscribed') AS contact_subscribed,
    EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = a.id AND s.person = w.person) AS suppressed,
    ${verifiedSender('a.id', 'w.domain', 'w.sender')} AS verified_sender
  FROM who w LEFT JOIN accounts a ON a.id = w.sender_account
  ORDER BY w.i`;

/** One email send's facts to read: a presented key to check (its hash), or the principal already known; the recipient's keyed hash; the sender's domain and address; a campaign's contact. */
export interface EmailFactsQuery {
  key: { hash: string } | null;
  principal: Principal | null;
  person: string;
  domain: string;
  sender: string;
  contactId?: string | null;
}

export function emailSendFacts(db: Db, items: EmailFactsQuery[]): Promise<EmailSendFactsRow[]> {
  const principals = items.map((a) => a.principal);
  return query<EmailSendFactsRow>(db, EMAIL_SEND_FACTS, [
    items.map((a) => a.key?.hash ?? null),
    principals.map((p) => p?.accountId ?? null),
    principals.map((p) => (p?.kind === 'apiKey' ? p.apiKeyId : null)),
    principals.map((p) => (p?.kind === 'apiKey' ? p.dailyLimit : null)),
    items.map((a) => a.person),
    items.map((a) => a.domain),
    items.map((a) => a.sender),
    items.map((a) => a.contactId ?? null),
  ], 'send_facts');
}

export interface SmsSendFactsRow {
  account_found: boolean;
  daily_send_cap: number;
  sms_enabled: boolean;
  origination_number: string | null;
  sandbox: boolean;
  sandbox_destination: boolean;
  /** why the destination is suppressed, null when it is not */
  suppression_reason: string | null;
}

// What the SMS rules (admitSmsSend) are decided over, for all sends arriving together in one statement,
// as EMAIL_SEND_FACTS does for email: the account's SMS settings and the destination's suppression.
const SMS_FACTS = `
  SELECT a.id IS NOT NULL AS account_found, a.daily_send_cap,
    coalesce((a.sms->>'enabled')::boolean, false) AS sms_enabled,
    a.sms->>'originationNumber' AS origination_number,
    coalesce((a.sms->>'sandbox')::boolean, false) AS sandbox,
    coalesce(a.sms->'sandboxDestinations' ? r.to_value, false) AS sandbox_destination,
    (SELECT s.reason FROM suppressions s WHERE s.account_id = a.id AND s.person = r.person) AS suppression_reason
  FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r (account_id, to_value, person, i)
  LEFT JOIN accounts a ON a.id = r.account_id
  ORDER BY r.i`;

export const smsSendFacts = (db: Db, items: { accountId: string; to: string; person: string }[]): Promise<SmsSendFactsRow[]> =>
  query<SmsSendFactsRow>(db, SMS_FACTS, [items.map((a) => a.accountId), items.map((a) => a.to), items.map((a) => a.person)], 'sms_facts');

export interface DueSendFactsRow {
  /** why the recipient is suppressed now, null when they are not */
  suppression_reason: string | null;
  /** whether the email's sender is still verified (its domain in full, or the address); true for an SMS */
  verified_sender: boolean;
}

// What a provider call long after its admission looks at again (rechecksAdmission), in one statement:
// the recipient's suppression and, for an email, its sender's verification, as EMAIL_SEND_FACTS reads them.
const DUE_SEND_FACTS = `
  SELECT (SELECT s.reason FROM suppressions s WHERE s.account_id = $1 AND s.person = $2) AS suppression_reason,
    $3::text IS NULL OR ${verifiedSender('$1', '$3', '$4')} AS verified_sender`;

/** The facts of one message due now: its account, its recipient's keyed hash and, for an email, its sender's domain and address. */
export async function dueSendFacts(db: Db, due: { accountId: string; person: string; sender: { domain: string; address: string } | null }): Promise<DueSendFactsRow> {
  const [row] = await query<DueSendFactsRow>(db, DUE_SEND_FACTS, [due.accountId, due.person, due.sender?.domain ?? null, due.sender?.address ?? null], 'due_send_facts');
  return row;
}
