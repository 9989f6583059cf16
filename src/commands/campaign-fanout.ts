import { setImmediate as turn } from 'node:timers/promises';
import type { Db } from '../adapters/db/knex.js';
import { campaignDecider, campaignStream, type CampaignCommand } from '../domain/campaigns/campaign.js';
import { isReachable, outcomeOfRefusal, stepRecord, type ContactOutcome } from '../domain/campaigns/fanout-step.js';
import { campaignMessageId } from '../domain/campaigns/personalise.js';
import { recipientVariables, unfilledPlaceholders } from '../domain/campaigns/recipient-variables.js';
import { fold } from '../domain/decider.js';
import { AppError } from '../domain/errors.js';
import { renderTemplate } from '../domain/email/render.js';
import { messageStream } from '../domain/messages/events.js';
import { SendRefused } from '../domain/messages/send-admission.js';
import type { Principal } from '../domain/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { Cause } from './caller.js';
import { execute } from './execute.js';
import type { SendEmailInput, SendEmailResult } from './send-email.js';
import { audiencePage, audienceSize, type AudienceContact } from '../read-models/contacts.js';
import { recordedMessageIds } from '../read-models/messages.js';
import { templateRow } from '../read-models/templates.js';

type SendEmail = (sender: Principal, input: SendEmailInput, options: { messageId: string; at: Date; cause: Cause }) => Promise<SendEmailResult>;

/** What a send refusal means for the campaign; anything else is an error of the step. */
function outcomeOf(err: unknown): ContactOutcome {
  const outcome = err instanceof SendRefused ? outcomeOfRefusal(err.reason) : null;
  if (!outcome) throw err;
  return outcome;
}

/**
 * Runs `work` over the items, at most `limit` at a time, beginning them in the items' order and none
 * once `stopped()` says so; answers the outcomes of the items begun, in the items' order, up to the
 * first one not begun.
 */
async function pooled<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>, stopped: () => boolean): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length && !stopped()) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results.slice(0, next);
}

/**
 * Runs the works it is given one at a time, each at a turn of the thread of its own, after whatever
 * was waiting for the thread when the one before it ended: renders are synchronous, and one may hold
 * the thread for as long as RENDER_LIMITS let it, so the sends and provider calls sharing the thread
 * get it between any two (64 renders begun at once took it for all of theirs).
 */
function turnByTurn() {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(work: () => T): Promise<T> => {
    const mine = last.then(() => turn()).then(work);
    last = mine.catch(() => {});
    return mine;
  };
}

export interface CampaignFanoutDeps {
  db: Db;
  eventStore: EventStore;
  sendEmail: SendEmail;
  clock: () => Date;
  /** contacts per step (default 500) */
  stepSize?: number;
  /** sends in flight at once within a step (default 64: as fast as 128 on a quiet machine, with smaller statements; 32 was 40 % slower) */
  concurrency?: number;
  /** how a contact's message is rendered (default renderTemplate; a test counts or slows them) */
  render?: typeof renderTemplate;
}

/**
 * The fan-out of a sending campaign, one step at a time: the next contacts in id order after the
 * campaign's cursor, each queued as a message with the one id it has in this campaign (so a step run
 * again, by a second worker or after a crash, queues nobody twice) or counted as skipped, then the
 * step's counts recorded against the cursor it began from. A step whose campaign is no longer sending
 * does nothing; the daily cap, a sender no longer verified or a template that fails to render stops
 * the step at the contact it happened to (nobody after that one is begun).
 */
export function createCampaignFanout(deps: CampaignFanoutDeps) {
  /**
   * Those of the step's messages an earlier run of it queued before it died: from the log, which has
   * them at once (the messages read model may trail it, and admitting one again could count a contact
   * suppressed since as skipped, or take its cap slot twice); from the read model where the store
   * cannot tell a batch of streams apart in one read.
   */
  async function queuedEarlier(ids: string[]): Promise<Set<string>> {
    if (!deps.eventStore.streamRevisions) return recordedMessageIds(deps.db, ids);
    const revisions = await deps.eventStore.streamRevisions(ids.map(messageStream));
    return new Set(ids.filter((id) => revisions.has(messageStream(id))));
  }

  const stepSize = deps.stepSize ?? 500;
  const concurrency = deps.concurrency ?? 64;
  const render = deps.render ?? renderTemplate;

  /** One step; answers whether the fan-out goes on with another (this step was recorded and said so). */
  async function step(campaignId: string, causationId?: string): Promise<boolean> {
    const streamId = campaignStream(campaignId);
    const history = await deps.eventStore.readStream(streamId);
    const state = fold(campaignDecider, history);
    if (state.status !== 'sending') return false;
    const campaign = state.definition!;
    const accountId = state.accountId!;
    const fromCursor = state.progress.cursor;
    // the campaign's messages and its progress correlate with the campaign, caused by this step's trigger
    const cause: Cause = { correlationId: campaignId, ...(causationId ? { causationId } : {}) };
    const record = (command: Omit<Extract<CampaignCommand, { kind: 'recordProgress' }>, 'kind' | 'fromCursor' | 'now'>) =>
      execute(campaignDecider, { kind: 'recordProgress', fromCursor, now: deps.clock().toISOString(), ...command }, {
        eventStore: deps.eventStore,
        streamId,
        metadata: { actor: 'system:campaign-fanout', ...cause },
      });

    const template = await templateRow(deps.db, accountId, campaign.templateId, ['subject', 'html', 'text']);
    if (!template) {
      await record({ progress: { cursor: fromCursor, queued: 0, skipped: 0, unfilled: 0 }, done: false, stoppedBy: { reason: 'template_deleted' } });
      return false;
    }
    const audience = fromCursor === null ? await audienceSize(deps.db, accountId, campaign.audience) : undefined;
    const rows = await audiencePage(deps.db, accountId, campaign.audience, fromCursor, stepSize + 1);
    const page = rows.slice(0, stepSize);
    const ids = page.map((c) => campaignMessageId(campaignId, c.id));
    const already = await queuedEarlier(ids);
    const sender: Principal = { kind: 'user', accountId, userId: state.createdBy!.replace(/^user:/, '') };

    // A template that fails for one contact most likely fails for every one, each render taking up to
    // a second of the thread the workers' sends share: the first contact the campaign stops at ends the step.
    let stopped = false;
    const oneRenderATurn = turnByTurn();
    /**
     * Renders the contact's message and queues it; null when the step stopped before its render's turn
     * came (the contact is left to the next step).
     */
    async function reach(contact: AudienceContact, messageId: string, variables: Record<string, unknown>): Promise<ContactOutcome | null> {
      let rendered: ReturnType<typeof renderTemplate> | null;
      try {
        rendered = await oneRenderATurn(() => (stopped ? null : render(template!, variables)));
      } catch (err) {
        if (err instanceof AppError && err.status === 400) return 'template_failed';
        throw err;
      }
      if (!rendered) return null;
      try {
        await deps.sendEmail(
          sender,
          {
            to: contact.email,
            fromEmail: campaign.fromEmail,
            ...(campaign.fromName ? { fromName: campaign.fromName } : {}),
            ...(campaign.replyTo ? { replyTo: campaign.replyTo } : {}),
            ...rendered,
            campaign: { id: campaignId, templateId: campaign.templateId, contactId: contact.id },
          },
          { messageId, at: deps.clock(), cause },
        );
      } catch (err) {
        return outcomeOf(err);
      }
      return 'queued';
    }

    const outcomes = await pooled(
      page,
      concurrency,
      async (contact): Promise<{ id: string; outcome: ContactOutcome; unfilled: boolean } | null> => {
        const { id } = contact;
        const messageId = campaignMessageId(campaignId, id);
        const variables = recipientVariables(campaign.variables, { email: contact.email, firstName: contact.first_name, lastName: contact.last_name, company: contact.company });
        // queued by an earlier run of this step that died before recording it: counted as that run would have
        if (already.has(messageId)) return { id, outcome: 'queued', unfilled: unfilledPlaceholders(template, variables) > 0 };
        if (!isReachable(contact)) return { id, outcome: 'skipped', unfilled: false };
        const outcome = await reach(contact, messageId, variables);
        if (outcome === null) return null;
        if (outcome !== 'queued' && outcome !== 'skipped') stopped = true;
        return { id, outcome, unfilled: outcome === 'queued' && unfilledPlaceholders(template, variables) > 0 };
      },
      () => stopped,
    );
    const notBegun = outcomes.indexOf(null);
    const contacts = (notBegun < 0 ? outcomes : outcomes.slice(0, notBegun)) as NonNullable<(typeof outcomes)[number]>[];

    const { events } = await record({
      // a contact not begun before the step stopped is one left after it, as are those after the page
      ...stepRecord({ fromCursor, contacts, more: rows.length > stepSize || contacts.length < page.length, now: deps.clock() }),
      ...(audience !== undefined ? { audience } : {}),
    });
    return events.some((e) => e.type === 'CampaignProgressed' && e.data.continues);
  }

  return { step };
}
export type CampaignFanout = ReturnType<typeof createCampaignFanout>;
