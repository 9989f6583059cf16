import { createId } from '../cuid.js';
import { query, type Db } from '../adapters/db/knex.js';
import { ACCOUNT_SCOPE_PREFIX, capScopesSql, KEY_SCOPE_PREFIX, reserveAdmittedSql, utcDay, type SendCounters } from '../adapters/db/send-counters.js';
import { emailDomain, formatFromHeader, normaliseEmail } from '../domain/email/address.js';
import type { QueuedAttachment } from '../domain/email/attachments.js';
import { renderTemplate } from '../domain/email/render.js';
import { rewriteForTracking } from '../domain/email/tracking.js';
import { createUnsubscribeToken } from '../domain/email/unsubscribe-token.js';
import { badRequest, notFound } from '../domain/errors.js';
import { messageStream, type EmailQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import { sendAtProblem } from '../domain/messages/schedule.js';
import { keyColumnsSql, keyRefusalSql, type CheckedKeyRow, type PresentedKey } from './api-keys.js';
import type { Principal } from '../http/principal.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';

export interface SendEmailInput {
  to: string;
  fromEmail: string;
  fromName?: string;
  replyTo?: string;
  subject?: string;
  html?: string;
  text?: string;
  templateId?: string;
  variables?: Record<string, unknown>;
  unsubscribeUrl?: string;
  tags?: string[];
  metadata?: Record<string, string>;
  /** ISO 8601 instant: a scheduled send (see sendAtProblem for the limits) */
  sendAt?: string;
  /** already checked against the attachment limits (see src/domain/email/attachments.ts) */
  attachments?: QueuedAttachment[];
}

/**
 * One send's admission: who sends (a key to check in the statement, or a principal already known),
 * to whom and from where, on which UTC day.
 */
interface Admission {
  key: PresentedKey | null;
  principal: Principal | null;
  to: string;
  domain: string;
  sender: string;
  day: string;
}

interface AdmissionRow extends CheckedKeyRow {
  /** false when the sender's account has no row (cannot happen through the API) */
  account_found: boolean;
  email_provider: EmailQueued['data']['provider'];
  tracking: EmailQueued['data']['tracking'];
  suppressed: boolean;
  verified_sender: boolean;
  /** the counters the send's slots are taken from (and given back to) */
  key_scope: string | null;
  account_scope: string;
  /** reserve_send_slots' answer; null for a send refused before it, which takes no slot */
  outcome: string | null;
}

// The key check, the account, the suppression and sender checks, and the cap reservation of the sends
// that pass them, in one statement for all sends arriving together: reserve_send_slots decides the
// admitted ones in arrival order, and a send refused by any check takes no slot. A send whose sender is
// already known (a principal) comes without a key to check.
const ADMIT_SENDS = `
  WITH r AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[])
      WITH ORDINALITY AS r (key_hash, ip, scope, at, account_id, key_id, key_cap, to_address, domain, sender, i)
  ),
  who AS (
    SELECT r.i, r.to_address, r.domain, r.sender, ${keyColumnsSql('k')},
      CASE WHEN r.key_hash IS NOT NULL THEN ${keyRefusalSql('k', 'r.ip', 'r.scope', 'r.at')} END AS refusal,
      CASE WHEN r.key_hash IS NULL THEN r.account_id ELSE k.account_id END AS sender_account,
      CASE WHEN r.key_hash IS NULL THEN r.key_id ELSE k.id END AS sender_key,
      CASE WHEN r.key_hash IS NULL THEN r.key_cap ELSE k.daily_limit END AS key_cap
    FROM r LEFT JOIN api_keys k ON k.key_hash = r.key_hash
  ),
  scoped AS (
    SELECT w.*, ${capScopesSql('sender_key', 'key_cap', 'sender_account', '$11', '$12')}
    FROM who w
  ),
  checked AS (
    SELECT w.*, a.id IS NOT NULL AS account_found, a.daily_send_cap, a.email_provider, a.tracking,
      EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = a.id AND s.value = w.to_address) AS suppressed,
      EXISTS (SELECT 1 FROM identities i WHERE i.account_id = a.id AND i.verified
                AND ((i.kind = 'domain' AND i.value = w.domain) OR (i.kind = 'email' AND i.value = w.sender))) AS verified_sender
    FROM scoped w LEFT JOIN accounts a ON a.id = w.sender_account
  ),
  ${reserveAdmittedSql('refusal IS NULL AND account_found AND NOT suppressed AND verified_sender', '$13')}
  SELECT c.i, c.id, c.account_id, c.scopes, c.daily_limit, c.refusal, c.account_found, c.email_provider, c.tracking, c.suppressed,
         c.verified_sender, c.key_scope, c.account_scope, reserved.outcome
  FROM checked c LEFT JOIN reserved ON reserved.i = c.i
  ORDER BY c.i`;

/** A scheduled send also says so, and when it goes out. */
export type SendEmailResult = { queued: true; messageLogId: string } | { queued: true; messageLogId: string; status: 'scheduled'; sendAt: string };

const isKey = (sender: Principal | PresentedKey): sender is PresentedKey => 'hash' in sender;

export interface SendEmailDeps {
  eventStore: EventStore;
  db: Db;
  counters: SendCounters;
  /** the authenticator's checks, for a key the request presents (see sendEmail) */
  keys: {
    check(key: PresentedKey): Promise<Principal>;
    accept(row: CheckedKeyRow, key: PresentedKey): Principal;
  };
  baseUrl: () => string;
  linkSecret: string;
}

/**
 * SendEmail: the send checks in the order the API promises (suppressed, unverified sender,
 * per-key cap, account cap), then `EmailQueued` on a new message stream. The provider is called later
 * by the send process manager, so the caller never waits for it.
 */
export function createSendEmail(deps: SendEmailDeps) {
  // The hot path: one round trip for the key, the checks and the cap (ADMIT_SENDS), and one statement
  // for the sends arriving together. A send never joins a statement already running, so a revocation or
  // a suppression recorded before the send was asked is always seen.
  const admissions = deps.counters.slotBatches<Admission, AdmissionRow>(async (db, day, items) => {
    const principals = items.map((a) => a.principal);
    return query<AdmissionRow>(db, ADMIT_SENDS, [
      items.map((a) => a.key?.hash ?? null),
      items.map((a) => a.key?.clientIp ?? null),
      items.map((a) => a.key?.scope ?? null),
      items.map((a) => a.key?.at ?? null),
      principals.map((p) => p?.accountId ?? null),
      principals.map((p) => (p?.kind === 'apiKey' ? p.apiKeyId : null)),
      principals.map((p) => (p?.kind === 'apiKey' ? p.dailyLimit : null)),
      items.map((a) => a.to),
      items.map((a) => a.domain),
      items.map((a) => a.sender),
      KEY_SCOPE_PREFIX,
      ACCOUNT_SCOPE_PREFIX,
      day,
    ], 'admit_sends');
  });

  /**
   * Queues one email from `sender`: a principal already authenticated, or the key a request presents,
   * checked in the admission statement itself. A send with a template needs its account before that
   * statement, and one whose placeholders do not render must not be answered before its key is
   * checked: for those the key is checked on its own first.
   */
  return async function sendEmail(
    sender: Principal | PresentedKey,
    input: SendEmailInput,
    options: { messageId?: string } = {},
  ): Promise<SendEmailResult> {
    // Checked before any slot is taken; the route checks it too, this guards every other caller.
    const sendAt = input.sendAt === undefined ? null : new Date(input.sendAt);
    const sendAtRefusal = sendAt && sendAtProblem(sendAt, new Date());
    if (sendAtRefusal) throw badRequest(`sendAt: ${sendAtRefusal}`);
    let key = isKey(sender) ? sender : null;
    let known = isKey(sender) ? null : sender;
    if (key && input.templateId) {
      known = await deps.keys.check(key);
      key = null;
    }
    let fields = { subject: input.subject, html: input.html, text: input.text };
    if (input.templateId) {
      const template = await deps.db('templates').where({ id: input.templateId, account_id: known!.accountId }).first('subject', 'html', 'text');
      if (!template) throw badRequest(`templateId ${input.templateId} not found`);
      fields = { subject: input.subject ?? template.subject, html: input.html ?? template.html, text: input.text ?? template.text };
    }
    let rendered: ReturnType<typeof renderTemplate>;
    try {
      rendered = renderTemplate({ subject: fields.subject ?? '', html: fields.html ?? '', text: fields.text ?? '' }, input.variables ?? {});
    } catch (err) {
      if (key) await deps.keys.check(key);
      throw err;
    }

    const from = normaliseEmail(input.fromEmail);
    const day = utcDay(key?.at ?? new Date()); // the day the slots are taken, and given back on
    const row = await admissions.add({
      key,
      principal: known,
      to: normaliseEmail(input.to),
      domain: emailDomain(from),
      sender: from,
      day,
    });
    const principal = key ? deps.keys.accept(row, key) : known!;
    if (!row.account_found) throw notFound('account not found');
    if (row.suppressed) throw badRequest(`${input.to} is suppressed`);
    // ADMIT_SENDS: the sender's domain is verified in full, or the address is a verified single sender
    if (!row.verified_sender) throw badRequest(`${input.fromEmail} is not verified for sending`);
    const accountId = principal.accountId;
    const apiKeyId = principal.kind === 'apiKey' ? principal.apiKeyId : null;
    const reservation = deps.counters.settle(row.outcome!, { day, keyScope: row.key_scope, accountScope: row.account_scope });

    // An idempotent request's id is the same on every attempt: one that takes over a crashed attempt's claim
    // appends the same events (same ids), which the store takes as already done, so nothing is queued twice
    // (the slot it took stays taken, as for any process dying after its admission).
    const messageId = options.messageId ?? createId();
    // Two writes: the cap slot (taken in the admission statement) and the message stream. Anything
    // failing from here on (tracking rewrite, append) gives the slot back; a process that dies in
    // between leaves the slot taken, which can only refuse a send early, never exceed the cap.
    try {
      const baseUrl = deps.baseUrl();
      const headers: EmailQueued['data']['headers'] = [];
      const serviceUnsubscribe = `${baseUrl}/u/${createUnsubscribeToken(deps.linkSecret, messageId)}`;
      if (input.unsubscribeUrl) {
        headers.push({ name: 'List-Unsubscribe', value: `<${serviceUnsubscribe}>` });
        headers.push({ name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' });
      }
      let html = rendered.html || null;
      if (html && row.tracking === 'service') {
        html = rewriteForTracking(html, {
          baseUrl,
          messageId,
          secret: deps.linkSecret,
          unsubscribeUrls: [serviceUnsubscribe, ...(input.unsubscribeUrl ? [input.unsubscribeUrl] : [])],
        });
      }

      const data: EmailQueued['data'] = {
        messageId,
        accountId,
        apiKeyId,
        campaignId: null,
        templateId: input.templateId ?? null,
        unsubscribeUrl: input.unsubscribeUrl ?? null,
        tracking: row.tracking,
        provider: row.email_provider,
        from: formatFromHeader(input.fromName, input.fromEmail),
        fromEmail: input.fromEmail,
        fromName: input.fromName ?? null,
        to: input.to,
        replyTo: input.replyTo ?? null,
        subject: rendered.subject,
        html,
        text: rendered.text || null,
        headers,
        ...(input.attachments?.length ? { attachments: input.attachments } : {}),
        queuedAt: new Date().toISOString(),
        ...(input.tags?.length ? { tags: input.tags } : {}),
        ...(input.metadata && Object.keys(input.metadata).length ? { metadata: input.metadata } : {}),
        ...(sendAt ? { sendAt: sendAt.toISOString() } : {}),
      };
      // A brand-new stream: nothing to read first (one round trip fewer on the hot path).
      const actor = principal.kind === 'apiKey' ? `apikey:${principal.apiKeyId}` : `user:${principal.userId}`;
      await execute(messageDecider, { kind: 'queueEmail', data }, {
        eventStore: deps.eventStore,
        streamId: messageStream(messageId),
        commandId: `queue-${messageId}`,
        metadata: { actor },
        history: [],
      });
    } catch (err) {
      await reservation.release();
      throw err;
    }
    return sendAt ? { queued: true, messageLogId: messageId, status: 'scheduled', sendAt: sendAt.toISOString() } : { queued: true, messageLogId: messageId };
  };
}
