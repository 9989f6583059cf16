import type { Decider } from '../decider.js';
import { conflict, notFound } from '../errors.js';
import { campaignActions, type CampaignAction, type CampaignStatus } from './status.js';

export { CAMPAIGN_STATUSES, type CampaignStatus } from './status.js';

/**
 * Why a campaign stopped queueing: an admin asked, the account's daily cap ran out, its sender is no
 * longer verified, or its template was deleted.
 */
export type PauseReason = 'manual' | 'daily_send_cap' | 'sender_not_verified' | 'template_deleted' | 'template_failed';

/** Which contacts of the account a campaign is for: both filters when both are given, all of them when neither is. */
export interface Audience {
  listId?: string;
  tag?: string;
}

export interface CampaignDefinition {
  name: string;
  templateId: string;
  fromEmail: string;
  fromName: string | null;
  replyTo: string | null;
  audience: Audience;
  variables: Record<string, unknown>;
}

/**
 * Where the walk over the audience's contacts changed since the fan-out began is (see late-joiners.ts):
 * the last one it looked at, in order of change (its updatedAt as the read model has it, then its id).
 */
export interface LateCursor {
  changedAt: string;
  id: string;
}

/** What one step of the fan-out did; contacts are named by id only (no personal data in the campaign's stream). */
export interface Progress {
  /** the last contact id the step got to, in id order (null: none yet) */
  cursor: string | null;
  queued: number;
  skipped: number;
  /** messages rendered with at least one placeholder the contact and variables could not fill */
  unfilled: number;
}

export type CampaignEvent =
  | { type: 'CampaignCreated'; data: CampaignDefinition & { campaignId: string; accountId: string; createdBy: string; createdAt: string } }
  | { type: 'CampaignScheduled'; data: { campaignId: string; scheduledAt: string } }
  | { type: 'CampaignStarted'; data: { campaignId: string; startedAt: string } }
  | {
      type: 'CampaignProgressed';
      data: Progress & {
        campaignId: string;
        /** the cursor the step began from (a late walk's step: the first contact found it was to reach; its `cursor`: the last it reached) */
        fromCursor: string | null;
        /** contacts the audience matched when the fan-out began (first step only) */
        audience?: number;
        /** the contacts the step counted skipped (absent from steps recorded before they were named) */
        skippedIds?: string[];
        /** the last step of the walk in id order: the late walk follows */
        walked?: true;
        /** a step of the late walk, reaching contacts it found */
        late?: true;
        /** the fan-out goes on with the next step */
        continues: boolean;
        at: string;
      };
    }
  /** a step of the late walk that looked at the contacts changed after `fromAfter`, up to `after`, and found these not reached yet */
  | {
      type: 'CampaignLateJoinersFound';
      data: { campaignId: string; fromAfter: LateCursor | null; after: LateCursor | null; contactIds: string[]; continues: boolean; at: string };
    }
  | { type: 'CampaignPaused'; data: { campaignId: string; reason: PauseReason; pausedAt: string; resumeAt: string | null } }
  /** `rescheduledFor`: paused before its scheduled start, it waits for that time again rather than start now */
  | { type: 'CampaignResumed'; data: { campaignId: string; resumedAt: string; auto: boolean; rescheduledFor?: string } }
  | { type: 'CampaignSent'; data: { campaignId: string; finishedAt: string } }
  | { type: 'CampaignCancelled'; data: { campaignId: string; cancelledAt: string } }
  /** the fields that changed, with their new values */
  | { type: 'CampaignChanged'; data: { campaignId: string; changes: Partial<CampaignDefinition>; changedAt: string } }
  /** a draft thrown away: nothing of it was ever sent */
  | { type: 'CampaignDeleted'; data: { campaignId: string; deletedAt: string } };

export type CampaignCommand =
  | { kind: 'create'; campaignId: string; accountId: string; createdBy: string; definition: CampaignDefinition; now: string }
  /** `scheduledAt` in the future schedules it, otherwise it starts now */
  | { kind: 'send'; accountId: string; scheduledAt: string | null; now: string }
  /** a scheduled campaign whose time has come */
  | { kind: 'start'; now: string }
  | { kind: 'pause'; accountId: string; now: string }
  | { kind: 'resume'; accountId: string; now: string }
  /** the daily cap's pause ends by itself once its day is over */
  | { kind: 'resumeAfterCap'; now: string }
  | { kind: 'cancel'; accountId: string; now: string }
  | { kind: 'edit'; accountId: string; changes: Partial<CampaignDefinition>; now: string }
  | { kind: 'delete'; accountId: string; now: string }
  /**
   * One fan-out step's outcome, decided over the state it started from: a step that began from another
   * cursor than the campaign's (a second worker on the same step) records nothing.
   */
  | {
      kind: 'recordProgress';
      fromCursor: string | null;
      progress: Progress;
      /** the contacts counted skipped, by id */
      skippedIds?: string[];
      audience?: number;
      /** every contact of the audience was reached */
      done: boolean;
      stoppedBy?: StoppedBy;
      now: string;
    }
  /**
   * A step of the late walk that looked for contacts not reached yet after `fromAfter`: what it found
   * (to be reached by the next step), and whether more contacts changed after `after`.
   */
  | { kind: 'recordLateJoiners'; fromAfter: LateCursor | null; after: LateCursor | null; contactIds: string[]; more: boolean; now: string }
  /**
   * A step of the late walk that reached the contacts found, from `first` (the first of them waiting),
   * up to `progress.cursor` (null: none) where it stopped, or all of them.
   */
  | { kind: 'recordLateProgress'; first: string; progress: Progress; skippedIds: string[]; stoppedBy?: StoppedBy; now: string };

/** A step stopped early: the account's daily cap (resumes by itself at `resumeAt`), or what needs an admin. */
export type StoppedBy = { reason: 'daily_send_cap'; resumeAt: string } | { reason: 'sender_not_verified' | 'template_deleted' | 'template_failed' };

export interface CampaignState {
  status: CampaignStatus | null;
  campaignId: string | null;
  accountId: string | null;
  definition: CampaignDefinition | null;
  createdBy: string | null;
  scheduledAt: string | null;
  pausedReason: PauseReason | null;
  progress: Progress;
  /** the fan-out has begun (its audience is fixed from then on) */
  started: boolean;
  /** when it began */
  startedAt: string | null;
  /** every step so far named the contacts it skipped (not so for one recorded before they were named) */
  skipsNamed: boolean;
  /**
   * Once the walk in id order has walked the audience: where the late walk is, and the contacts it
   * found that the next step is to reach (none: the next step looks for more).
   */
  late: { after: LateCursor | null; pending: string[] } | null;
  deleted: boolean;
}

export const CAMPAIGN_STREAM_PREFIX = 'campaign-';
export const campaignStream = (id: string) => `${CAMPAIGN_STREAM_PREFIX}${id}`;

const initialState: CampaignState = {
  status: null,
  campaignId: null,
  accountId: null,
  definition: null,
  createdBy: null,
  scheduledAt: null,
  pausedReason: null,
  progress: { cursor: null, queued: 0, skipped: 0, unfilled: 0 },
  started: false,
  startedAt: null,
  skipsNamed: true,
  late: null,
  deleted: false,
};

const sameCursor = (a: LateCursor | null, b: LateCursor | null) => (a === null || b === null ? a === b : a.changedAt === b.changedAt && a.id === b.id);

/** Only a step of the running fan-out counts; the one under way when it was paused or cancelled too (its messages are queued). */
const stepUnderWay = (state: CampaignState) => state.status === 'sending' || state.status === 'paused' || state.status === 'cancelled';

/** The pause a step stopped by `by` records. */
const pausedBy = (campaignId: string, by: StoppedBy, now: string): CampaignEvent => ({
  type: 'CampaignPaused',
  data: { campaignId, reason: by.reason, pausedAt: now, resumeAt: by.reason === 'daily_send_cap' ? by.resumeAt : null },
});

/** Refuses with a 409 an action that makes no sense from `status`. */
function allow(action: CampaignAction, status: CampaignStatus) {
  if (!campaignActions(status).includes(action)) throw conflict(`cannot ${action} a campaign that is ${status}`);
}

export const campaignDecider: Decider<CampaignState, CampaignCommand, CampaignEvent> = {
  initialState,
  evolve(state, event) {
    const d = event.data as any;
    switch (event.type) {
      case 'CampaignCreated': {
        const { campaignId, accountId, createdBy, createdAt, ...definition } = d;
        return { ...state, status: 'draft', campaignId, accountId, createdBy, definition };
      }
      case 'CampaignScheduled':
        return { ...state, status: 'scheduled', scheduledAt: d.scheduledAt };
      case 'CampaignStarted':
        return { ...state, status: 'sending', started: true, startedAt: state.startedAt ?? d.startedAt };
      case 'CampaignProgressed': {
        const counts = { queued: state.progress.queued + d.queued, skipped: state.progress.skipped + d.skipped, unfilled: state.progress.unfilled + d.unfilled };
        if (d.late) {
          // the contacts found up to the last one reached are reached; the rest wait for the next step
          const pending = d.cursor === null ? state.late!.pending : state.late!.pending.slice(state.late!.pending.indexOf(d.cursor) + 1);
          return { ...state, progress: { ...state.progress, ...counts }, late: { ...state.late!, pending } };
        }
        return {
          ...state,
          progress: { cursor: d.cursor, ...counts },
          skipsNamed: state.skipsNamed && Array.isArray(d.skippedIds),
          late: d.walked ? { after: null, pending: [] } : state.late,
        };
      }
      case 'CampaignLateJoinersFound':
        return { ...state, late: { after: d.after, pending: d.contactIds } };
      case 'CampaignPaused':
        return { ...state, status: 'paused', pausedReason: d.reason };
      case 'CampaignResumed':
        // resumed to sending, a campaign paused before its start has started
        return d.rescheduledFor
          ? { ...state, status: 'scheduled', pausedReason: null }
          : { ...state, status: 'sending', pausedReason: null, started: true, startedAt: state.startedAt ?? d.resumedAt };
      case 'CampaignSent':
        return { ...state, status: 'sent', pausedReason: null };
      case 'CampaignCancelled':
        return { ...state, status: 'cancelled', pausedReason: null };
      case 'CampaignChanged':
        return { ...state, definition: { ...state.definition!, ...d.changes } };
      case 'CampaignDeleted':
        return { ...state, deleted: true };
      default:
        return state;
    }
  },
  decide(command, state) {
    if (command.kind === 'create') {
      if (state.status) return [];
      const { campaignId, accountId, createdBy, definition, now } = command;
      return [{ type: 'CampaignCreated', data: { ...definition, campaignId, accountId, createdBy, createdAt: now } }];
    }
    if (!state.status || state.deleted || ('accountId' in command && command.accountId !== state.accountId)) throw notFound('campaign not found');
    const campaignId = state.campaignId!;
    switch (command.kind) {
      case 'send':
        allow('send', state.status);
        if (command.scheduledAt && command.scheduledAt > command.now) {
          return [{ type: 'CampaignScheduled', data: { campaignId, scheduledAt: command.scheduledAt } }];
        }
        return [{ type: 'CampaignStarted', data: { campaignId, startedAt: command.now } }];
      case 'start':
        return state.status === 'scheduled' ? [{ type: 'CampaignStarted', data: { campaignId, startedAt: command.now } }] : [];
      case 'pause':
        // Over the daily cap's pause, which would end by itself at 00:00 UTC, an admin's pause is
        // recorded: it waits for a resume. The other reasons wait for one already, and say what to mend.
        if (state.status === 'paused' && state.pausedReason !== 'daily_send_cap') return [];
        if (state.status !== 'paused') allow('pause', state.status);
        return [{ type: 'CampaignPaused', data: { campaignId, reason: 'manual', pausedAt: command.now, resumeAt: null } }];
      case 'resume': {
        allow('resume', state.status);
        // a pause is undone, not turned into a start: a campaign paused before its time waits for it again
        const waiting = !state.started && state.scheduledAt !== null && state.scheduledAt > command.now;
        return [{ type: 'CampaignResumed', data: { campaignId, resumedAt: command.now, auto: false, ...(waiting ? { rescheduledFor: state.scheduledAt! } : {}) } }];
      }
      case 'resumeAfterCap':
        if (state.status !== 'paused' || state.pausedReason !== 'daily_send_cap') return [];
        return [{ type: 'CampaignResumed', data: { campaignId, resumedAt: command.now, auto: true } }];
      case 'cancel':
        if (state.status === 'cancelled') return [];
        allow('cancel', state.status);
        return [{ type: 'CampaignCancelled', data: { campaignId, cancelledAt: command.now } }];
      case 'edit': {
        allow('edit', state.status);
        const definition = state.definition!;
        const changes = Object.fromEntries(
          Object.entries(command.changes).filter(([field, value]) => JSON.stringify(value) !== JSON.stringify(definition[field as keyof CampaignDefinition])),
        ) as Partial<CampaignDefinition>;
        if (Object.keys(changes).length === 0) return [];
        // The fan-out walks the audience it began with: another audience would leave its progress meaningless.
        if (changes.audience && state.started) throw conflict('cannot change the audience of a campaign that has started');
        return [{ type: 'CampaignChanged', data: { campaignId, changes, changedAt: command.now } }];
      }
      case 'delete':
        allow('delete', state.status);
        return [{ type: 'CampaignDeleted', data: { campaignId, deletedAt: command.now } }];
      case 'recordProgress': {
        // Only a step of the walk in id order that began where the campaign's cursor is counts.
        if (!stepUnderWay(state) || state.late || command.fromCursor !== state.progress.cursor) return [];
        const stopped = !command.done && command.stoppedBy && state.status === 'sending';
        // The walk in id order misses a contact that joins the audience behind it: once it has walked
        // the audience, the late walk follows (late-joiners.ts), unless a step recorded before skipped
        // contacts were named leaves it unable to tell those apart from the ones that joined.
        const walked = command.done && state.skipsNamed && command.skippedIds !== undefined;
        const events: CampaignEvent[] = [
          {
            type: 'CampaignProgressed',
            data: {
              campaignId,
              fromCursor: command.fromCursor,
              ...command.progress,
              ...(command.audience !== undefined ? { audience: command.audience } : {}),
              ...(command.skippedIds ? { skippedIds: command.skippedIds } : {}),
              ...(walked ? { walked: true as const } : {}),
              continues: state.status === 'sending' && (walked || (!command.done && !stopped)),
              at: command.now,
            },
          },
        ];
        if (command.done && !walked && state.status !== 'cancelled') events.push({ type: 'CampaignSent', data: { campaignId, finishedAt: command.now } });
        else if (stopped) events.push(pausedBy(campaignId, command.stoppedBy!, command.now));
        return events;
      }
      case 'recordLateJoiners': {
        const late = state.late;
        if (!stepUnderWay(state) || !late || late.pending.length > 0 || !sameCursor(late.after, command.fromAfter)) return [];
        // nobody left to reach, nobody changed after: every contact of the audience was reached
        const sent = command.contactIds.length === 0 && !command.more && state.status === 'sending';
        const { fromAfter, after, contactIds, now } = command;
        const events: CampaignEvent[] = [
          { type: 'CampaignLateJoinersFound', data: { campaignId, fromAfter, after, contactIds, continues: state.status === 'sending' && !sent, at: now } },
        ];
        if (sent) events.push({ type: 'CampaignSent', data: { campaignId, finishedAt: now } });
        return events;
      }
      case 'recordLateProgress': {
        if (!stepUnderWay(state) || state.late?.pending[0] !== command.first) return [];
        const stopped = command.stoppedBy && state.status === 'sending';
        const events: CampaignEvent[] = [
          {
            type: 'CampaignProgressed',
            data: {
              campaignId,
              fromCursor: command.first,
              ...command.progress,
              skippedIds: command.skippedIds,
              late: true,
              continues: state.status === 'sending' && !stopped,
              at: command.now,
            },
          },
        ];
        if (stopped) events.push(pausedBy(campaignId, command.stoppedBy!, command.now));
        return events;
      }
    }
  },
};
