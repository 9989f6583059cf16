import { createId } from '../cuid.js';
import { query } from '../adapters/db/knex.js';
import { ACCOUNT_SCOPE_PREFIX, capScopesSql, KEY_SCOPE_PREFIX, reserveAdmittedSql, utcDay, type SendCounters } from '../adapters/db/send-counters.js';
import { badRequest, notFound } from '../domain/errors.js';
import { messageStream, type SmsQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import { parsePhoneNumber } from '../domain/sms/phone.js';
import { countSmsSegments } from '../domain/sms/segments.js';
import type { Principal } from '../http/principal.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';

export const MAX_SMS_SEGMENTS = 10;

/** Why an account refuses an SMS, in the order the API checks its rules (ADMIT_SMS's `refusal`). */
type SmsRefusal = 'account' | 'disabled' | 'no_origination' | 'sandbox' | 'opted_out' | 'suppressed';

interface SmsAdmission {
  principal: Principal;
  to: string;
  day: string;
}

interface SmsAdmissionRow {
  refusal: SmsRefusal | null;
  origination_number: string | null;
  key_scope: string | null;
  account_scope: string;
  /** reserve_send_slots' answer; null for a send refused before it, which takes no slot */
  outcome: string | null;
}

// The account's SMS settings, the suppression check and the cap reservation of the sends that pass
// them, in one statement for all sends arriving together, as ADMIT_SENDS does for email: a send
// refused by any rule takes no slot. Run prepared on the counters' connections (index scans only).
const ADMIT_SMS = `
  WITH r AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[]) WITH ORDINALITY AS r (account_id, key_id, key_cap, to_value, i)
  ),
  checked AS (
    SELECT r.i, r.to_value, a.daily_send_cap, a.sms->>'originationNumber' AS origination_number,
      r.key_cap, ${capScopesSql('r.key_id', 'r.key_cap', 'r.account_id', '$5', '$6')},
      CASE
        WHEN a.id IS NULL THEN 'account'
        WHEN NOT coalesce((a.sms->>'enabled')::boolean, false) THEN 'disabled'
        WHEN coalesce(a.sms->>'originationNumber', '') = '' THEN 'no_origination'
        WHEN coalesce((a.sms->>'sandbox')::boolean, false) AND NOT coalesce(a.sms->'sandboxDestinations' ? r.to_value, false) THEN 'sandbox'
        ELSE (SELECT CASE WHEN s.reason = 'sms_optout' THEN 'opted_out' ELSE 'suppressed' END
              FROM suppressions s WHERE s.account_id = a.id AND s.value = r.to_value)
      END AS refusal
    FROM r LEFT JOIN accounts a ON a.id = r.account_id
  ),
  ${reserveAdmittedSql('refusal IS NULL', '$7')}
  SELECT c.refusal, c.origination_number, c.key_scope, c.account_scope, reserved.outcome
  FROM checked c LEFT JOIN reserved ON reserved.i = c.i
  ORDER BY c.i`;

/** The 400s of a refused SMS (a missing account is a 404). */
function refusalError(refusal: SmsRefusal, to: string) {
  switch (refusal) {
    case 'account':
      return notFound('account not found');
    case 'disabled':
      return badRequest('SMS is not enabled for this account');
    case 'no_origination':
      return badRequest('no origination number is provisioned for this account');
    case 'sandbox':
      return badRequest(`${to} is not a verified sandbox destination (the account's SMS is in sandbox mode)`);
    case 'opted_out':
      return badRequest(`${to} has opted out of SMS`);
    case 'suppressed':
      return badRequest(`${to} is suppressed`);
  }
}

/**
 * SendSms: every 400 of docs/api.md's SMS list with a message saying which rule failed, then the caps, then
 * `SmsQueued` on a new message stream (same stream, history and status model as email).
 */
export function createSendSms(deps: { eventStore: EventStore; counters: SendCounters; provider: 'sns' | 'sandbox' }) {
  // A send never joins a statement already running, so an opt-out recorded before it was asked is seen.
  const admissions = deps.counters.slotBatches<SmsAdmission, SmsAdmissionRow>((db, day, items) =>
    query<SmsAdmissionRow>(db, ADMIT_SMS, [
      items.map((a) => a.principal.accountId),
      items.map((a) => (a.principal.kind === 'apiKey' ? a.principal.apiKeyId : null)),
      items.map((a) => (a.principal.kind === 'apiKey' ? a.principal.dailyLimit : null)),
      items.map((a) => a.to),
      KEY_SCOPE_PREFIX,
      ACCOUNT_SCOPE_PREFIX,
      day,
    ], 'admit_sms'),
  );

  return async function sendSms(principal: Principal, input: { to: string; body: string }, options: { messageId?: string } = {}) {
    const accountId = principal.accountId;
    const to = parsePhoneNumber(input.to);
    if (!to) throw badRequest(`${input.to} is not a valid phone number (E.164, or a 10-digit US number)`);
    const { segments, encoding } = countSmsSegments(input.body);
    if (segments > MAX_SMS_SEGMENTS) {
      throw badRequest(`body is too long: ${segments} segments (${encoding}), at most ${MAX_SMS_SEGMENTS} allowed`);
    }
    const day = utcDay(new Date()); // the day the slots are taken, and given back on
    const row = await admissions.add({ principal, to, day });
    if (row.refusal) throw refusalError(row.refusal, to);
    const reservation = deps.counters.settle(row.outcome!, { day, keyScope: row.key_scope, accountScope: row.account_scope });
    const messageId = options.messageId ?? createId(); // an idempotent request's, the same on every retry
    const data: SmsQueued['data'] = {
      messageId,
      accountId,
      apiKeyId: principal.kind === 'apiKey' ? principal.apiKeyId : null,
      to,
      body: input.body,
      segments,
      encoding,
      originationNumber: row.origination_number!,
      provider: deps.provider,
      queuedAt: new Date().toISOString(),
    };
    // Two writes, the cap slot and the message stream: a failed append gives the slot back (a process
    // dying in between leaves it taken, which errs on the side of the cap), as for email.
    try {
      await execute(messageDecider, { kind: 'queueSms', data }, {
        eventStore: deps.eventStore,
        streamId: messageStream(messageId),
        commandId: `queue-${messageId}`,
        metadata: { actor: principal.kind === 'apiKey' ? `apikey:${principal.apiKeyId}` : `user:${principal.userId}` },
        history: [], // a brand-new stream: nothing to read first
      });
    } catch (err) {
      await reservation.release();
      throw err;
    }
    return { queued: true as const, messageLogId: messageId, segments, encoding };
  };
}
