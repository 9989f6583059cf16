import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import type { Db } from '../adapters/db/knex.js';
import type { CampaignState } from '../domain/campaigns/campaign.js';
import { isReachable, outcomeOfRefusal, type ContactOutcome } from '../domain/campaigns/fanout-step.js';
import { campaignMessageId } from '../domain/campaigns/personalise.js';
import { recipientVariables, unfilledPlaceholders } from '../domain/campaigns/recipient-variables.js';
import { AppError } from '../domain/errors.js';
import { renderTemplate, type EmailParts } from '../domain/email/render.js';
import { messageStream } from '../domain/messages/events.js';
import { SendRefused } from '../domain/messages/send-admission.js';
import type { Principal } from '../domain/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { Cause } from './caller.js';
import type { SendEmailInput, SendEmailResult } from './send-email.js';
import type { AudienceContact } from '../read-models/contacts.js';
import { recordedMessageIds } from '../read-models/messages.js';

export type SendEmail = (sender: Principal, input: SendEmailInput, options: { messageId: string; at: Date; cause: Cause }) => Promise<SendEmailResult>;

/** What became of one contact a step reached. */
export interface Reached {
  id: string;
  outcome: ContactOutcome;
  unfilled: boolean;
}

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
 * was waiting for the thread when the one before it ended.
 */
function turnByTurn() {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(work: () => T): Promise<T> => {
    const mine = last.then(() => turn()).then(work);
    last = mine.catch(() => {});
    return mine;
  };
}

/**
 * A render that held the thread this long makes the step's later renders take turns with the sends and
 * provider calls sharing the thread (turnByTurn): a costly template, up to what RENDER_LIMITS let
 * through, would otherwise hold it for 64 renders begun at once. Cheap renders go straight on: a turn
 * each (up to a few milliseconds on a busy thread) made a step of 500 seven times slower.
 */
const SLOW_RENDER_MS = 5;

export interface CampaignReachDeps {
  db: Db;
  eventStore: EventStore;
  sendEmail: SendEmail;
  clock: () => Date;
  /** sends in flight at once within a step (default 64: as fast as 128 on a quiet machine, with smaller statements; 32 was 40 % slower) */
  concurrency?: number;
  /** how a contact's message is rendered (default renderTemplate; a test counts or slows them) */
  render?: typeof renderTemplate;
}

/** How a fan-out step reaches its contacts: each queued the campaign's message, or counted skipped. */
export function createCampaignReach(deps: CampaignReachDeps) {
  const concurrency = deps.concurrency ?? 64;
  const render = deps.render ?? renderTemplate;

  /**
   * Those of these messages already queued: from the log, which has them at once (the messages read
   * model may trail it, and admitting one again could count a contact suppressed since as skipped, or
   * take its cap slot twice); from the read model where the store cannot tell a batch of streams
   * apart in one read.
   */
  async function queuedAlready(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    if (!deps.eventStore.streamRevisions) return recordedMessageIds(deps.db, ids);
    const revisions = await deps.eventStore.streamRevisions(ids.map(messageStream));
    return new Set(ids.filter((id) => revisions.has(messageStream(id))));
  }

  /** Of these contacts, those the campaign's message was queued for already. */
  async function contactsQueued(campaignId: string, contactIds: string[]): Promise<Set<string>> {
    const queued = await queuedAlready(contactIds.map((id) => campaignMessageId(campaignId, id)));
    return new Set(contactIds.filter((id) => queued.has(campaignMessageId(campaignId, id))));
  }

  /**
   * Queues the campaign's message to each contact, under the one id it has in the campaign (so a step
   * run again, by a second worker or after a crash, queues nobody twice), or counts it skipped. The
   * first contact the campaign stops at (the daily cap, a sender no longer verified, a template that
   * fails to render) ends it: nobody after that one is begun. Answers the contacts reached, in order.
   */
  async function reach(run: { campaignId: string; state: CampaignState; template: EmailParts; contacts: AudienceContact[]; cause: Cause }): Promise<Reached[]> {
    const { campaignId, state, template, contacts, cause } = run;
    const campaign = state.definition!;
    const sender: Principal = { kind: 'user', accountId: state.accountId!, userId: state.createdBy!.replace(/^user:/, '') };
    const already = await queuedAlready(contacts.map((c) => campaignMessageId(campaignId, c.id)));
    // A template that fails for one contact most likely fails for every one, each render taking up to
    // a second of the thread the workers' sends share: the first contact the campaign stops at ends the step.
    let stopped = false;
    let slow = false;
    const oneRenderATurn = turnByTurn();
    const rendered = (variables: Record<string, unknown>): EmailParts | null => {
      if (stopped) return null;
      const began = performance.now();
      try {
        return render(template, variables);
      } catch (err) {
        // at once, before any other send of the step begins its render
        if (err instanceof AppError && err.status === 400) stopped = true;
        throw err;
      } finally {
        if (performance.now() - began > SLOW_RENDER_MS) slow = true;
      }
    };

    /** The contact's message rendered and queued; null when the step stopped before its render came. */
    async function queue(contact: AudienceContact, messageId: string, variables: Record<string, unknown>): Promise<ContactOutcome | null> {
      let parts: EmailParts | null;
      try {
        parts = slow ? await oneRenderATurn(() => rendered(variables)) : rendered(variables);
      } catch (err) {
        if (err instanceof AppError && err.status === 400) return 'template_failed';
        throw err;
      }
      if (!parts) return null;
      try {
        await deps.sendEmail(
          sender,
          {
            to: contact.email,
            fromEmail: campaign.fromEmail,
            ...(campaign.fromName ? { fromName: campaign.fromName } : {}),
            ...(campaign.replyTo ? { replyTo: campaign.replyTo } : {}),
            ...parts,
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
      contacts,
      concurrency,
      async (contact): Promise<Reached | null> => {
        const { id } = contact;
        const messageId = campaignMessageId(campaignId, id);
        const variables = recipientVariables(campaign.variables, { email: contact.email, firstName: contact.first_name, lastName: contact.last_name, company: contact.company });
        // queued by an earlier run of this step that died before recording it: counted as that run would have
        if (already.has(messageId)) return { id, outcome: 'queued', unfilled: unfilledPlaceholders(template, variables) > 0 };
        if (!isReachable(contact)) return { id, outcome: 'skipped', unfilled: false };
        const outcome = await queue(contact, messageId, variables);
        if (outcome === null) return null;
        if (outcome !== 'queued' && outcome !== 'skipped') stopped = true;
        return { id, outcome, unfilled: outcome === 'queued' && unfilledPlaceholders(template, variables) > 0 };
      },
      () => stopped,
    );
    const notBegun = outcomes.indexOf(null);
    return (notBegun < 0 ? outcomes : outcomes.slice(0, notBegun)) as Reached[];
  }

  return { reach, contactsQueued };
}
