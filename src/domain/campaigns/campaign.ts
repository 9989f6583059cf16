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
        fromCursor: string | null;
        /** contacts the audience matched when the fan-out began (first step only) */
        audience?: number;
        /** the fan-out goes on with the next step */
        continues: boolean;
        at: string;
      };
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
      audience?: number;
      /** every contact of the audience was reached */
      done: boolean;
      /** the step stopped early: the account's daily cap (resumes by itself at `resumeAt`), or what needs an admin */
      stoppedBy?: { reason: 'daily_send_cap'; resumeAt: string } | { reason: 'sender_not_verified' | 'template_deleted' | 'template_failed' };
      now: string;
    };

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
  deleted: false,
};

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
        return { ...state, status: 'sending', started: true };
      case 'CampaignProgressed':
        return {
          ...state,
          progress: {
            cursor: d.cursor,
            queued: state.progress.queued + d.queued,
            skipped: state.progress.skipped + d.skipped,
            unfilled: state.progress.unfilled + d.unfilled,
          },
        };
      case 'CampaignPaused':
        return { ...state, status: 'paused', pausedReason: d.reason };
      case 'CampaignResumed':
        // resumed to sending, a campaign paused before its start has started
        return d.rescheduledFor ? { ...state, status: 'scheduled', pausedReason: null } : { ...state, status: 'sending', pausedReason: null, started: true };
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
        // Only a step of the running fan-out counts; a paused or cancelled campaign still takes the step
        // that was under way when it was paused or cancelled (its messages are queued).
        const underWay = state.status === 'sending' || state.status === 'paused' || state.status === 'cancelled';
        if (!underWay || command.fromCursor !== state.progress.cursor) return [];
        const stopped = !command.done && command.stoppedBy && state.status === 'sending';
        const events: CampaignEvent[] = [
          {
            type: 'CampaignProgressed',
            data: {
              campaignId,
              fromCursor: command.fromCursor,
              ...command.progress,
              ...(command.audience !== undefined ? { audience: command.audience } : {}),
              continues: !command.done && !stopped && state.status === 'sending',
              at: command.now,
            },
          },
        ];
        if (command.done && state.status !== 'cancelled') events.push({ type: 'CampaignSent', data: { campaignId, finishedAt: command.now } });
        else if (stopped) {
          const by = command.stoppedBy!;
          events.push({
            type: 'CampaignPaused',
            data: { campaignId, reason: by.reason, pausedAt: command.now, resumeAt: by.reason === 'daily_send_cap' ? by.resumeAt : null },
          });
        }
        return events;
      }
    }
  },
};
