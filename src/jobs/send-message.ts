import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ProviderRate } from './provider-rate.js';
import type { Db } from '../adapters/db/knex.js';
import { correlationOf } from '../commands/caller.js';
import { execute } from '../commands/execute.js';
import { createAdmissionRecheck } from '../commands/recheck-admission.js';
import type { EmailProviderKind } from '../domain/accounts/account.js';
import { messageStream, type EmailQueued, type SmsQueued } from '../domain/messages/events.js';
import { messageDecider, needsProviderCall, type MessageState } from '../domain/messages/message.js';
import { fold } from '../domain/decider.js';
import { attachmentSummary, type QueuedAttachment } from '../domain/email/attachments.js';
import { singleLine } from '../domain/email/header-line.js';
import type { AttachmentStore } from '../ports/attachment-store.js';
import { ProviderError, type EmailProvider, type EmailSendResult } from '../ports/email-provider.js';
import { reportedAt, type NormalizedProviderEvent } from '../domain/provider-events/normalized.js';
import type { EventStore } from '../ports/event-store.js';
import type { Job, JobQueue } from '../ports/job-queue.js';
import type { PersonOf } from '../ports/key-store.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import { NO_METRICS, type Metrics } from '../ports/metrics.js';
import { persistently } from '../persistently.js';
import { createSideEffectLeases, endLease, releaseSideEffect, rescheduleSideEffect, type SideEffectJob } from '../adapters/db/side-effects.js';

/** Why a message whose recipient and content were erased before its send failed. */
const ERASED_BEFORE_SENT = 'the message was erased before it was sent (its recipient, or its content by retention)';

/** Delays before provider attempts 2..6 for transient errors (throttling, outages). */
export const PROVIDER_RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000];

/**
 * The least delay before the retry of a send the provider may have taken (see ProviderError
 * `mayHaveSent`) when the retry will ask the provider first: its search must have had time to show
 * the message, or the retry sends it a second time.
 */
export const PROVIDER_SEARCH_SETTLE_MS = 60_000;
/**
 * The longest a send waits in its worker slot for its account's provider rate; one that would wait
 * longer is put back until its turn (a window of a second or two is waited out, which keeps
 * transactional sends ahead of a campaign's within it).
 */
const RATE_HOLD_MS = 2_000;

export interface SendMessageDeps {
  db: Db;
  eventStore: EventStore;
  queue: JobQueue;
  attachmentStore: AttachmentStore;
  /** the keyed hash a recipient is on the suppression list under */
  personOf: PersonOf;
  emailProviderFor(kind: EmailProviderKind): EmailProvider;
  smsProviderFor(kind: 'sns' | 'sandbox'): SmsProvider;
  retryDelaysMs?: number[];
  searchSettleMs?: number;
  /**
   * Whether SES publishes Send events to us (a configuration set's event destination through SNS to
   * /api/provider-events/ses), and how long after a send in doubt to wait for one before sending again.
   */
  sesSendEvents?: { enabled: boolean; settleMs: number };
  /** the side-effect lease (renewed while a run lasts); tests shorten it */
  leaseMs?: number;
  /** the accounts' provider rates (none: unlimited) */
  providerRate?: ProviderRate;
  logger?: Logger;
  /** provider calls by provider and outcome, with their latency */
  metrics?: Metrics;
  /** records what a provider reported with its answer (the sandbox's simulator) as its notifications are recorded */
  recordReports?: (reports: NormalizedProviderEvent[]) => Promise<unknown>;
}

/**
 * Calls the provider for one queued message and records the result on the message stream. The
 * message stream is the guard: a message that already has a provider id or has failed is never sent
 * again, and a lease on the side effect keeps two workers from calling the provider for the same
 * message at once (no transaction is held across the provider call, so a slow provider cannot starve
 * the connection pool).
 *
 * What remains is the window between the provider's answer and our append (tried a few times). A run
 * that may have died in it, or given up, leaves the send in doubt when its lease runs out, and the next
 * run looks for the first send before calling again: in the stream, where the provider's own events
 * record it (SES Send, any event naming our id), then by asking the provider (Postmark's message search
 * on our `msg_id`, the sandbox's table). SES has no such lookup: without Send events published to us,
 * it is sent again, as SMS is.
 */
export function createSendMessageHandler(deps: SendMessageDeps) {
  const delays = deps.retryDelaysMs ?? PROVIDER_RETRY_DELAYS_MS;
  const metrics = deps.metrics ?? NO_METRICS;
  const leases = createSideEffectLeases(deps.db, deps.queue, { leaseMs: deps.leaseMs, logger: deps.logger });
  const recheckAdmission = createAdmissionRecheck(deps);

  return async function handle(job: Job<SideEffectJob & { messageId: string }>): Promise<void> {
    const { messageId, sideEffectId } = job.data;
    const claim = await leases.claim(job.data);
    if (!claim) return;
    const run: Run = { onFailure: claim.leaseLost ? 'keep' : 'release' };
    try {
      await attempt(messageId, sideEffectId, claim.leaseLost ? (claim.lostAt ?? new Date()) : null, run);
    } catch (err) {
      // A database that failed the run may fail these too (a dropped connection): tried again for a
      // few seconds, or the effect waits for its lease to end and is then in doubt.
      if (run.onFailure === 'release') await persistently(() => releaseSideEffect(deps.db, sideEffectId)).catch(() => undefined);
      else if (run.onFailure === 'handOn') await persistently(() => endLease(deps.db, sideEffectId)).catch(() => undefined);
      throw err;
    } finally {
      leases.letGo(sideEffectId);
    }
  };

  /**
   * What an unexpected failure (database, event store) leaves for the queue's retry of the job:
   * `release`: the claim is given back (the provider has not been called); `handOn`: the lease ends
   * now and the next run, in doubt, asks the provider first; `keep`: the lease runs to its end, and
   * the next run, in doubt, gives the provider time to show the send (its events, its search) before
   * it looks.
   */
  interface Run {
    onFailure: 'release' | 'handOn' | 'keep';
  }

  async function attempt(messageId: string, sideEffectId: string, lostAt: Date | null, run: Run): Promise<void> {
    const inDoubt = lostAt !== null;
    const streamId = messageStream(messageId);
    let history = await deps.eventStore.readStream(streamId);
    let state = fold(messageDecider, history);
    if (needsProviderCall(state) && inDoubt) {
      // The lost run may have sent it moments before its lease ended: what shows it (SES's Send event
      // on the stream, Postmark's search) may need a while. This run holds the lease meanwhile.
      const settleMs = settleFor(state);
      const wait = lostAt.getTime() + settleMs - Date.now();
      if (wait > 0) {
        await sleep(wait);
        history = await deps.eventStore.readStream(streamId);
        state = fold(messageDecider, history);
      }
    }
    if (!needsProviderCall(state)) {
      // an operator following a crash wants to read that the send in doubt was settled, and how
      if (inDoubt) deps.logger?.info({ messageId, status: state.status }, 'send in doubt settled by what the stream shows since (its status), not sent again');
      await leases.markDone(sideEffectId);
      return;
    }
    const attempt = state.attempts + 1;
    const now = () => new Date().toISOString();
    const commandId = `provider-attempt-${attempt}`;
    const metadata = { actor: 'system:send-worker', causationId: sideEffectId, ...correlationOf(history[0]) };
    // The stream was read just before the provider call: decide on that history (one round trip per
    // send); if anything was appended meanwhile, execute reads and decides again.
    const record = (command: Parameters<typeof messageDecider.decide>[0]) =>
      execute(messageDecider, command, { eventStore: deps.eventStore, streamId, commandId, metadata, history });

    const queued = state.queued!;
    if (!queued.to) {
      // Erased before it went out (its person, or its day's content by retention; a scheduled send
      // waits long enough): nothing is left to send, and no retry brings it back.
      await record({ kind: 'failUnsent', error: ERASED_BEFORE_SENT, now: now() });
      await leases.markDone(sideEffectId);
      return;
    }
    const accepted = async (providerMessageId: string) => {
      await record({ kind: 'providerAccepted', providerMessageId, provider: queued.provider, attempt, now: now() });
      await leases.markDone(sideEffectId);
    };
    const emailProvider = state.channel === 'email' ? deps.emailProviderFor((queued as EmailQueued['data']).provider) : undefined;
    const askable = emailProvider?.findSent ? emailProvider : undefined;

    // A run in doubt that fails stays in doubt: an askable provider is asked again at once, another
    // send waits for the lease to end.
    if (inDoubt) run.onFailure = askable ? 'handOn' : 'keep';
    // A retry follows an error that may have come after the provider took the message (a timeout, a
    // 5xx): a provider that can be asked is asked then too.
    if (inDoubt || (askable && state.attempts > 0)) {
      const earlier = askable ? await askable.findSent!(messageId) : null;
      if (earlier) {
        deps.logger?.info({ messageId, provider: queued.provider }, 'send found at the provider (an earlier run sent it): recorded, not sent again');
        return accepted(earlier.providerMessageId);
      }
      if (!askable && inDoubt) {
        if (queued.provider === 'ses' && deps.sesSendEvents?.enabled) {
          deps.logger?.warn({ messageId, provider: queued.provider, settleMs: deps.sesSendEvents.settleMs }, 'send in doubt, and no SES Send event came within the settle period: sending again');
        } else {
          deps.logger?.warn(
            { messageId, provider: queued.provider },
            queued.provider === 'ses'
              ? 'send in doubt (its worker stopped between calling SES and recording the answer) and SES Send events are not published to us (SES_SEND_EVENTS): sending again, so the recipient may get it twice; see docs/operations.md'
              : 'send in doubt (its worker stopped between calling the provider and recording the answer), and the provider cannot tell whether it has it: sending again, so the recipient may get it twice',
          );
        }
      }
    }

    // Admitted long ago (a scheduled send, a retry, a campaign's turn): a recipient who unsubscribed,
    // bounced or complained since is not sent to, nor is anyone from a sender no longer verified. After
    // the lookups above, so that a send an earlier run made is recorded as sent rather than withheld.
    const checked = await recheckAdmission({ streamId, history, state, metadata, now: now() });
    if (!needsProviderCall(checked.state)) {
      if (checked.withheld) deps.logger?.info({ messageId }, 'recipient suppressed or sender unverified since the message was accepted: failed, not sent');
      await leases.markDone(sideEffectId);
      return;
    }

    if (emailProvider && deps.providerRate) {
      const later = await deps.providerRate.take(queued.accountId, (queued as EmailQueued['data']).campaignId ? 'campaign' : 'transactional', { holdMs: RATE_HOLD_MS });
      if (later) {
        // its account's provider rate has no call left for a while: the slot goes to other sends
        // meanwhile (nothing was called, nothing is recorded)
        await rescheduleSideEffect(deps.db, deps.queue, sideEffectId, later);
        return;
      }
    }
    // Until here nothing was called: a failure gave the effect back, and the next run is not in doubt.
    // From here a failure may come after the provider took the message.
    run.onFailure = askable ? 'handOn' : 'keep';
    let result: EmailSendResult;
    const called = performance.now();
    const seconds = () => (performance.now() - called) / 1000;
    try {
      result = emailProvider ? await sendEmail(emailProvider, queued as EmailQueued['data']) : await sendSms(queued as SmsQueued['data']);
      metrics.providerCall(queued.provider, 'accepted', seconds());
    } catch (err) {
      const retryable = !(err instanceof ProviderError) || err.retryable;
      metrics.providerCall(queued.provider, retryable && delays[attempt - 1] !== undefined ? 'retry' : 'failed', seconds());
      const detail = err instanceof Error ? err.message : String(err);
      let delay = retryable ? delays[attempt - 1] : undefined;
      // The provider may have taken it: the retry waits until what shows a send (the search, SES's
      // Send event on the stream) has had time to, and is settled by it rather than sent again.
      if (delay !== undefined && err instanceof ProviderError && err.mayHaveSent) delay = Math.max(delay, settleFor(state));
      if (delay === undefined) {
        await record({ kind: 'providerError', attempt, error: detail, retryAt: null, now: now() });
        await leases.markDone(sideEffectId);
        deps.logger?.warn({ messageId, attempt, err: detail }, 'message failed');
      } else {
        const retryAt = new Date(Date.now() + delay);
        await record({ kind: 'providerError', attempt, error: detail, retryAt: retryAt.toISOString(), now: now() });
        await rescheduleSideEffect(deps.db, deps.queue, sideEffectId, retryAt);
      }
      return;
    }
    // The provider's answer now exists only in this process, and its search may not show the message
    // yet: a failing database is tried again, and if it still fails the lease runs to its end.
    run.onFailure = 'keep';
    await persistently(() => accepted(result.providerMessageId));
    // after the acceptance, as a provider's notification comes after its answer; a stop in between
    // loses a simulated report only (nothing real is reported this way)
    if (result.reports?.length && deps.recordReports) {
      const at = new Date().toISOString();
      await deps.recordReports(result.reports.map((report) => reportedAt(report, at))).catch((err) => deps.logger?.warn({ messageId, err }, 'simulated provider report not recorded'));
    }
  }

  /** How long after a lost run the provider's record of its send can take to show. */
  function settleFor(state: MessageState): number {
    if (state.channel !== 'email') return 0;
    const kind = (state.queued as EmailQueued['data']).provider;
    if (deps.emailProviderFor(kind).findSent) return deps.searchSettleMs ?? PROVIDER_SEARCH_SETTLE_MS;
    if (kind === 'ses' && deps.sesSendEvents?.enabled) return deps.sesSendEvents.settleMs;
    return 0;
  }

  async function sendEmail(provider: EmailProvider, m: EmailQueued['data']) {
    const attachments = await loadAttachments(m.attachments);
    // Every single-line header value, for every provider, once more here: messages queued before the send
    // command made them so still carry their line breaks.
    return provider.send({
      messageId: m.messageId,
      from: singleLine(m.from),
      to: m.to,
      replyTo: m.replyTo ? singleLine(m.replyTo) : undefined,
      subject: singleLine(m.subject),
      html: m.html ?? undefined,
      text: m.text ?? undefined,
      headers: m.headers.map((h) => ({ name: h.name, value: singleLine(h.value) })),
      disableProviderTracking: m.tracking !== 'provider',
      tags: m.tags ?? [],
      metadata: m.metadata ?? {},
      ...(attachments ? { attachments } : {}),
    });
  }

  /**
   * The queued attachments with their bytes, from the store or from the event that carries them; one
   * whose bytes are gone (erased, or past retention) fails the send for good.
   */
  async function loadAttachments(list: QueuedAttachment[] | undefined) {
    if (!list?.length) return undefined;
    const blobs = await deps.attachmentStore.get(list.flatMap((a) => ('blobId' in a ? [a.blobId] : [])));
    return list.map((attachment) => {
      const content = 'blobId' in attachment ? blobs.get(attachment.blobId) : typeof attachment.content === 'string' ? Buffer.from(attachment.content, 'base64') : undefined;
      if (!content) throw new ProviderError(`the bytes of attachment ${attachment.filename} are no longer kept`, false);
      return { ...attachmentSummary(attachment), content };
    });
  }

  function sendSms(m: SmsQueued['data']) {
    return deps.smsProviderFor(m.provider).send({
      messageId: m.messageId,
      to: m.to,
      body: m.body,
      originationNumber: m.originationNumber,
    });
  }
}
