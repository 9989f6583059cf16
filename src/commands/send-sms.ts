import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import type { SendCounters } from '../adapters/db/send-counters.js';
import type { SmsSettings } from '../domain/accounts/account.js';
import { badRequest, notFound } from '../domain/errors.js';
import { createGroupCommit } from '../group-commit.js';
import { messageStream, type SmsQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import { parsePhoneNumber } from '../domain/sms/phone.js';
import { countSmsSegments } from '../domain/sms/segments.js';
import type { Principal } from '../http/principal.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';

export const MAX_SMS_SEGMENTS = 10;

/**
 * SendSms: every 400 of SPEC.md §4 with a message saying which rule failed, then the caps, then
 * `SmsQueued` on a new message stream (same stream, history and status model as email).
 */
interface SmsCheckRow {
  daily_send_cap: number;
  sms: SmsSettings;
  suppressed_reason: string | null;
}

export function createSendSms(deps: { eventStore: EventStore; db: Db; counters: SendCounters; provider: 'sns' | 'sandbox' }) {
  // The account's settings and the suppression check in one round trip, and those of sends arriving
  // together in one statement (as for email). A send never joins a statement already running, so an
  // opt-out recorded before the send was asked is always seen.
  const smsChecks = createGroupCommit<{ accountId: string; to: string }, SmsCheckRow | undefined>(async (items) => {
    const { rows } = await deps.db.raw(
      `SELECT r.i, a.daily_send_cap, a.sms,
         (SELECT s.reason FROM suppressions s WHERE s.account_id = a.id AND s.value = r.to_value LIMIT 1) AS suppressed_reason
       FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS r (account_id, to_value, i)
       JOIN accounts a ON a.id = r.account_id`,
      [items.map((c) => c.accountId), items.map((c) => c.to)],
    );
    const results: (SmsCheckRow | undefined)[] = items.map(() => undefined);
    for (const row of rows) results[Number(row.i) - 1] = row;
    return results;
  });

  return async function sendSms(principal: Principal, input: { to: string; body: string }) {
    const accountId = principal.accountId;
    const to = parsePhoneNumber(input.to);
    if (!to) throw badRequest(`${input.to} is not a valid phone number (E.164, or a 10-digit US number)`);
    const { segments, encoding } = countSmsSegments(input.body);
    if (segments > MAX_SMS_SEGMENTS) {
      throw badRequest(`body is too long: ${segments} segments (${encoding}), at most ${MAX_SMS_SEGMENTS} allowed`);
    }
    const account = await smsChecks.add({ accountId, to });
    if (!account) throw notFound('account not found');
    const sms: SmsSettings = account.sms;
    if (!sms.enabled) throw badRequest('SMS is not enabled for this account');
    if (!sms.originationNumber) throw badRequest('no origination number is provisioned for this account');
    if (sms.sandbox && !sms.sandboxDestinations.includes(to)) {
      throw badRequest(`${to} is not a verified sandbox destination (the account's SMS is in sandbox mode)`);
    }
    if (account.suppressed_reason) throw badRequest(account.suppressed_reason === 'sms_optout' ? `${to} has opted out of SMS` : `${to} is suppressed`);

    const reservation = await deps.counters.reserve({
      accountId,
      accountCap: account.daily_send_cap,
      apiKeyId: principal.kind === 'apiKey' ? principal.apiKeyId : null,
      keyLimit: principal.kind === 'apiKey' ? principal.dailyLimit : null,
    });
    const messageId = createId();
    const data: SmsQueued['data'] = {
      messageId,
      accountId,
      apiKeyId: principal.kind === 'apiKey' ? principal.apiKeyId : null,
      to,
      body: input.body,
      segments,
      encoding,
      originationNumber: sms.originationNumber,
      provider: deps.provider,
      queuedAt: new Date().toISOString(),
    };
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
