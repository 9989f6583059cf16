import { campaignDecider, campaignStream, type CampaignCommand, type CampaignState } from '../domain/campaigns/campaign.js';
import { stepRecord } from '../domain/campaigns/fanout-step.js';
import { contactsSkipped, lateWalkSince, notReached } from '../domain/campaigns/late-joiners.js';
import { fold } from '../domain/decider.js';
import type { EmailParts } from '../domain/email/render.js';
import type { RecordedEvent } from '../ports/event-store.js';
import type { Cause } from './caller.js';
import { createCampaignReach, type CampaignReachDeps } from './campaign-reach.js';
import { execute } from './execute.js';
import { audienceChangedSince, audienceContactsByIds, audiencePage, audienceSize, type AudienceContact } from '../read-models/contacts.js';
import { templateRow } from '../read-models/templates.js';

export interface CampaignFanoutDeps extends CampaignReachDeps {
  /** contacts per step (default 500) */
  stepSize?: number;
}

const NO_PROGRESS = { queued: 0, skipped: 0, unfilled: 0 };

/** A contact found by the late walk that has left the audience since, or was erased: reached all the same, and skipped. */
const gone = (id: string): AudienceContact => ({ id, email: '', first_name: null, last_name: null, company: null, status: 'gone' });

/**
 * The fan-out of a sending campaign, one step at a time, each recorded with its counts against where
 * it began (a second worker's run of the same step records nothing). First the walk in id order: the
 * next contacts after the campaign's cursor, each queued a message or counted skipped (see
 * campaign-reach.ts). Then the late walk (late-joiners.ts): steps that look through the audience's
 * contacts changed since the fan-out began for those no step reached, and steps that reach them; the
 * campaign is sent when one finds nobody left. A step whose campaign is no longer sending does nothing.
 */
export function createCampaignFanout(deps: CampaignFanoutDeps) {
  const stepSize = deps.stepSize ?? 500;
  const { reach, contactsQueued } = createCampaignReach(deps);

  interface Step {
    campaignId: string;
    history: RecordedEvent[];
    state: CampaignState;
    cause: Cause;
    /** records the step's outcome; answers whether the fan-out goes on with another step */
    record(command: CampaignCommand): Promise<boolean>;
  }

  /** A step of the walk in id order: the audience's next contacts after the campaign's cursor. */
  async function walkStep({ campaignId, state, cause, record }: Step, template: EmailParts | undefined): Promise<boolean> {
    const fromCursor = state.progress.cursor;
    const now = deps.clock();
    if (!template) {
      return record({ kind: 'recordProgress', fromCursor, progress: { cursor: fromCursor, ...NO_PROGRESS }, skippedIds: [], done: false, stoppedBy: { reason: 'template_deleted' }, now: now.toISOString() });
    }
    const { accountId, definition } = state;
    const audience = fromCursor === null ? await audienceSize(deps.db, accountId!, definition!.audience) : undefined;
    const rows = await audiencePage(deps.db, accountId!, definition!.audience, fromCursor, stepSize + 1);
    const page = rows.slice(0, stepSize);
    const contacts = await reach({ campaignId, state, template, contacts: page, cause });
    return record({
      kind: 'recordProgress',
      fromCursor,
      // a contact not begun before the step stopped is one left after it, as are those after the page
      ...stepRecord({ fromCursor, contacts, more: rows.length > stepSize || contacts.length < page.length, now }),
      ...(audience !== undefined ? { audience } : {}),
      now: deps.clock().toISOString(),
    });
  }

  /** A step of the late walk that looks through the next contacts changed since the fan-out began for those not reached yet. */
  async function findStep({ campaignId, history, state, record }: Step): Promise<boolean> {
    const fromAfter = state.late!.after;
    const rows = await audienceChangedSince(deps.db, state.accountId!, state.definition!.audience, lateWalkSince(state.startedAt!), fromAfter, stepSize + 1);
    const page = rows.slice(0, stepSize);
    const ids = page.map((row) => row.id);
    const last = page.at(-1);
    return record({
      kind: 'recordLateJoiners',
      fromAfter,
      after: last ? { changedAt: last.changedAt, id: last.id } : fromAfter,
      contactIds: notReached(ids, await contactsQueued(campaignId, ids), contactsSkipped(history)),
      more: rows.length > stepSize,
      now: deps.clock().toISOString(),
    });
  }

  /** A step of the late walk that reaches the contacts it found. */
  async function lateStep({ campaignId, state, cause, record }: Step, template: EmailParts | undefined): Promise<boolean> {
    const { pending } = state.late!;
    const first = pending[0];
    if (!template) {
      return record({ kind: 'recordLateProgress', first, progress: { cursor: null, ...NO_PROGRESS }, skippedIds: [], stoppedBy: { reason: 'template_deleted' }, now: deps.clock().toISOString() });
    }
    const present = new Map((await audienceContactsByIds(deps.db, state.accountId!, state.definition!.audience, pending)).map((c) => [c.id, c]));
    const contacts = await reach({ campaignId, state, template, contacts: pending.map((id) => present.get(id) ?? gone(id)), cause });
    const { progress, skippedIds, stoppedBy } = stepRecord({ fromCursor: null, contacts, more: false, now: deps.clock() });
    return record({ kind: 'recordLateProgress', first, progress, skippedIds, ...(stoppedBy ? { stoppedBy } : {}), now: deps.clock().toISOString() });
  }

  /** One step; answers whether the fan-out goes on with another (this step was recorded and said so). */
  async function step(campaignId: string, causationId?: string): Promise<boolean> {
    const streamId = campaignStream(campaignId);
    const history = await deps.eventStore.readStream(streamId);
    const state = fold(campaignDecider, history);
    if (state.status !== 'sending') return false;
    // the campaign's messages and its progress correlate with the campaign, caused by this step's trigger
    const cause: Cause = { correlationId: campaignId, ...(causationId ? { causationId } : {}) };
    const record = async (command: CampaignCommand) => {
      const { events } = await execute(campaignDecider, command, { eventStore: deps.eventStore, streamId, metadata: { actor: 'system:campaign-fanout', ...cause } });
      return events.some((e) => (e.type === 'CampaignProgressed' || e.type === 'CampaignLateJoinersFound') && e.data.continues);
    };
    const run: Step = { campaignId, history, state, cause, record };
    if (state.late && state.late.pending.length === 0) return findStep(run);
    const template = await templateRow(deps.db, state.accountId!, state.definition!.templateId, ['subject', 'html', 'text']);
    return state.late ? lateStep(run, template) : walkStep(run, template);
  }

  return { step };
}
export type CampaignFanout = ReturnType<typeof createCampaignFanout>;
