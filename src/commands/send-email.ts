import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import { capScopes, utcDay, type SendCounters } from '../adapters/db/send-counters.js';
import { emailDomain, formatFromHeader, normaliseEmail } from '../domain/email/address.js';
import { attachmentBlobId, attachmentSummary, type CheckedAttachment } from '../domain/email/attachments.js';
import { singleLine } from '../domain/email/header-line.js';
import { hasPlaceholders, renderTemplate } from '../domain/email/render.js';
import { rewriteForTracking } from '../domain/email/tracking.js';
import { createUnsubscribeToken } from '../domain/email/unsubscribe-token.js';
import { badRequest } from '../domain/errors.js';
import { messageStream, type EmailQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import { sendAtProblem } from '../domain/messages/schedule.js';
import { admitEmailSend, type EmailSendFacts } from '../domain/messages/send-admission.js';
import type { PresentedKey } from './api-keys.js';
import type { CheckedKeyRow } from '../read-models/api-keys.js';
import { emailSendFacts, type EmailSendFactsRow } from '../read-models/send-facts.js';
import { templateRow } from '../read-models/templates.js';
import { actorOf, type Principal } from '../domain/principal.js';
import type { AttachmentStore } from '../ports/attachment-store.js';
import type { EventStore } from '../ports/event-store.js';
import type { PersonOf } from '../ports/key-store.js';
import { admitSend } from './admit-send.js';
import { queuedByEarlierAttempt } from './earlier-attempt.js';
import type { Cause } from './caller.js';
import { NO_METRICS, type Metrics } from '../ports/metrics.js';
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
  attachments?: CheckedAttachment[];
  /**
   * A campaign's message: subject and bodies come rendered for the contact (nothing is rendered again,
   * so a contact's own text is never read as a placeholder) and it always offers unsubscribing; it is
   * refused (`not_subscribed`) once its contact is erased or no longer subscribed.
   */
  campaign?: { id: string; templateId: string; contactId: string };
}

/**
 * One send's facts to read: who sends (a key to check in the statement, or a principal already known),
 * to whom and from where.
 */
interface FactsRequest {
  key: PresentedKey | null;
  principal: Principal | null;
  /** the recipient's keyed hash (suppressions are looked up by it) */
  person: string;
  domain: string;
  sender: string;
  /** a campaign's contact, read again as the message is queued */
  contactId: string | null;
}

/** A scheduled send also says so, and when it goes out. */
export type SendEmailResult = { queued: true; messageLogId: string } | { queued: true; messageLogId: string; status: 'scheduled'; sendAt: string };

const isKey = (sender: Principal | PresentedKey): sender is PresentedKey => 'hash' in sender;

const resultOf = (messageLogId: string, sendAt: Date | null): SendEmailResult =>
  sendAt ? { queued: true, messageLogId, status: 'scheduled', sendAt: sendAt.toISOString() } : { queued: true, messageLogId };

export interface SendEmailDeps {
  eventStore: EventStore;
  db: Db;
  counters: SendCounters;
  /** the authenticator's checks, for a key the request presents (see sendEmail); none for a sender that only sends as known principals (the campaign fan-out) */
  keys?: {
    check(key: PresentedKey): Promise<Principal>;
    accept(row: CheckedKeyRow, key: PresentedKey): Principal;
  };
  attachmentStore: AttachmentStore;
  baseUrl: () => string;
  linkSecret: string;
  personOf: PersonOf;
  /** sends accepted, and refused by the rule that refused them */
  metrics?: Metrics;
}

/**
 * SendEmail: the send rules in the order the API promises (admitEmailSend: suppressed, unverified
 * sender, per-key cap, account cap), then `EmailQueued` on a new message stream. The provider is called
 * later by the send process manager, so the caller never waits for it.
 */
export function createSendEmail(deps: SendEmailDeps) {
  const metrics = deps.metrics ?? NO_METRICS;
  const refused = (reason: string) => metrics.messageRefused('email', reason);
  // The hot path: one statement reads the facts of the sends arriving together (emailSendFacts), the rules
  // decide in memory, and the admitted ones take their slots together in one more (counters.reserve).
  // A send never joins a statement already running, so a revocation or a suppression recorded before
  // the send was asked is always seen.
  const facts = deps.counters.factBatches<FactsRequest, EmailSendFactsRow>((db, items) => emailSendFacts(db, items));

  /**
   * Queues one email from `sender`: a principal already authenticated, or the key a request presents,
   * checked in the statement that reads the send's facts (emailSendFacts). A send with a template needs its
   * account before that statement, and one whose placeholders do not render must not be answered before its key is
   * checked: for those the key is checked on its own first.
   */
  return async function sendEmail(
    sender: Principal | PresentedKey,
    input: SendEmailInput,
    options: {
      messageId?: string;
      /** an idempotent request's retry that took over a dead attempt, which may have queued `messageId` */
      retaken?: boolean;
      /** the send's time for the daily caps (default: now) */
      at?: Date;
      cause?: Cause;
    } = {},
  ): Promise<SendEmailResult> {
    if (options.retaken && options.messageId) {
      const earlier = (await queuedByEarlierAttempt(deps.eventStore, options.messageId)) as EmailQueued['data'] | null;
      if (earlier) {
        if (isKey(sender)) await deps.keys!.check(sender); // answered only to a caller still let in
        return resultOf(earlier.messageId, earlier.sendAt ? new Date(earlier.sendAt) : null);
      }
    }
    // Checked before any slot is taken, and here rather than in the route's body schema: it depends on
    // the time, and a request answered before (under its Idempotency-Key) is answered again once its
    // sendAt has passed, or (a dead attempt's retry, above) with what it queued.
    const sendAt = input.sendAt === undefined ? null : new Date(input.sendAt);
    const sendAtRefusal = sendAt && sendAtProblem(sendAt, new Date());
    if (sendAtRefusal) {
      if (isKey(sender)) await deps.keys!.check(sender); // a bad key is answered before any 400
      throw badRequest(`sendAt: ${sendAtRefusal}`, { issues: [{ field: 'sendAt', message: sendAtRefusal }] });
    }
    let key = isKey(sender) ? sender : null;
    let known = isKey(sender) ? null : sender;
    if (key && input.templateId) {
      known = await deps.keys!.check(key);
      key = null;
    }
    let fields = { subject: input.subject, html: input.html, text: input.text };
    if (input.templateId && !input.campaign) {
      const template = await templateRow(deps.db, known!.accountId, input.templateId, ['subject', 'html', 'text']);
      if (!template) throw badRequest(`templateId ${input.templateId} not found`);
      fields = { subject: input.subject ?? template.subject, html: input.html ?? template.html, text: input.text ?? template.text };
    }
    let rendered: ReturnType<typeof renderTemplate>;
    try {
      const parts = { subject: fields.subject ?? '', html: fields.html ?? '', text: fields.text ?? '' };
      rendered = input.campaign || !hasPlaceholders(input) ? parts : renderTemplate(parts, input.variables ?? {});
    } catch (err) {
      if (key) await deps.keys!.check(key);
      throw err;
    }

    const from = normaliseEmail(input.fromEmail);
    const day = utcDay(options.at ?? key?.at ?? new Date()); // the day the slots are taken, and given back on
    const row = await facts.add({ key, principal: known, person: deps.personOf(input.to), domain: emailDomain(from), sender: from, contactId: input.campaign?.contactId ?? null });
    const principal = key ? deps.keys!.accept(row, key) : known!;
    const given: EmailSendFacts = {
      to: input.to,
      fromEmail: input.fromEmail,
      accountFound: row.account_found,
      ...(input.campaign ? { contactSubscribed: row.contact_subscribed } : {}),
      suppressed: row.suppressed,
      verifiedSender: row.verified_sender,
    };
    const reservation = await admitSend(admitEmailSend, given, deps.counters, {
      ...capScopes(day, row.sender_account!, row.sender_key, row.key_cap),
      keyCap: row.key_cap,
      accountCap: row.daily_send_cap,
    }, refused);
    const accountId = principal.accountId;
    const apiKeyId = principal.kind === 'apiKey' ? principal.apiKeyId : null;

    // An idempotent request's id is the same on every attempt: one that takes over a crashed attempt's claim
    // appends the same events (same ids), which the store takes as already done, so nothing is queued twice
    // (the slot it took stays taken, as for any process dying after its admission).
    const messageId = options.messageId ?? createId();
    // Two writes: the cap slot (taken by admitSend) and the message stream. Anything
    // failing from here on (tracking rewrite, append) gives the slot back; a process that dies in
    // between leaves the slot taken, which can only refuse a send early, never exceed the cap.
    try {
      const baseUrl = deps.baseUrl();
      const headers: EmailQueued['data']['headers'] = [];
      const serviceUnsubscribe = `${baseUrl}/u/${createUnsubscribeToken(deps.linkSecret, messageId)}`;
      if (input.unsubscribeUrl || input.campaign) {
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
        campaignId: input.campaign?.id ?? null,
        templateId: input.campaign?.templateId ?? input.templateId ?? null,
        unsubscribeUrl: input.unsubscribeUrl ?? null,
        tracking: row.tracking,
        provider: row.email_provider,
        from: formatFromHeader(input.fromName, input.fromEmail),
        fromEmail: input.fromEmail,
        fromName: input.fromName ?? null,
        to: input.to,
        replyTo: input.replyTo ?? null,
        // rendered first: a variable (a campaign contact's firstName) may carry a line break
        subject: singleLine(rendered.subject),
        html,
        text: rendered.text || null,
        headers,
        ...(input.attachments?.length
          ? { attachments: input.attachments.map((a, i) => ({ ...attachmentSummary(a), blobId: attachmentBlobId(messageId, i) })) }
          : {}),
        queuedAt: new Date().toISOString(),
        ...(input.tags?.length ? { tags: input.tags } : {}),
        ...(input.metadata && Object.keys(input.metadata).length ? { metadata: input.metadata } : {}),
        ...(sendAt ? { sendAt: sendAt.toISOString() } : {}),
      };
      // The bytes first, so the event never names a blob that is not there. If the append then fails
      // they stay unreferenced (a retried command writes the same ids); that costs space, never a send.
      if (input.attachments?.length) {
        await deps.attachmentStore.put(
          input.attachments.map((a, i) => ({ id: attachmentBlobId(messageId, i), content: a.bytes })),
        );
      }
      // A brand-new stream: nothing to read first (one round trip fewer on the hot path).
      await execute(messageDecider, { kind: 'queueEmail', data }, {
        eventStore: deps.eventStore,
        streamId: messageStream(messageId),
        commandId: `queue-${messageId}`,
        metadata: { actor: actorOf(principal), ...options.cause },
        history: [],
      });
    } catch (err) {
      await reservation.release();
      throw err;
    }
    metrics.messageAccepted('email');
    return resultOf(messageId, sendAt);
  };
}
