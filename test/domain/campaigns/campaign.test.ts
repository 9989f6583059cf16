import { expect } from 'chai';
import { campaignDecider, type CampaignCommand, type CampaignEvent } from '../../../src/domain/campaigns/campaign.js';
import { AppError } from '../../../src/domain/errors.js';
import { campaignActions, type CampaignAction } from '../../../src/domain/campaigns/status.js';
import { given } from '../../support/given.js';

const definition = {
  name: 'Spring',
  templateId: 't1',
  fromEmail: 'news@acme.test',
  fromName: null,
  replyTo: null,
  audience: { listId: 'l1' },
  variables: {},
};
const created: CampaignEvent = { type: 'CampaignCreated', data: { ...definition, campaignId: 'c1', accountId: 'a1', createdBy: 'user:u1', createdAt: 'T0' } };
const started: CampaignEvent = { type: 'CampaignStarted', data: { campaignId: 'c1', startedAt: 'T1' } };
const progressed = (fromCursor: string | null, cursor: string, continues = true): CampaignEvent => ({
  type: 'CampaignProgressed',
  data: { campaignId: 'c1', fromCursor, cursor, queued: 2, skipped: 1, unfilled: 0, continues, at: 'T2' },
});
const paused = (reason: 'manual' | 'daily_send_cap' = 'manual'): CampaignEvent => ({
  type: 'CampaignPaused',
  data: { campaignId: 'c1', reason, pausedAt: 'T3', resumeAt: reason === 'daily_send_cap' ? '2026-01-02T00:00:00.000Z' : null },
});
const sent: CampaignEvent = { type: 'CampaignSent', data: { campaignId: 'c1', finishedAt: 'T4' } };
const cancelled: CampaignEvent = { type: 'CampaignCancelled', data: { campaignId: 'c1', cancelledAt: 'T4' } };

function conflictOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).status).to.equal(409);
    return (err as AppError).message;
  }
  throw new Error('expected a 409');
}

const step = (fromCursor: string | null, extra: Partial<Extract<CampaignCommand, { kind: 'recordProgress' }>> = {}): CampaignCommand => ({
  kind: 'recordProgress',
  fromCursor,
  progress: { cursor: 'k9', queued: 3, skipped: 1, unfilled: 2 },
  done: false,
  now: 'T5',
  ...extra,
});

describe('campaign decider', () => {
  it('create makes a draft; a repeated create appends nothing', () => {
    expect(given(campaignDecider).when({ kind: 'create', campaignId: 'c1', accountId: 'a1', createdBy: 'user:u1', definition, now: 'T0' })).to.deep.equal([created]);
    expect(given(campaignDecider, [created]).when({ kind: 'create', campaignId: 'c1', accountId: 'a1', createdBy: 'user:u1', definition, now: 'T9' })).to.deep.equal([]);
  });

  it('send starts a draft now, or schedules it for a future scheduledAt', () => {
    expect(given(campaignDecider, [created]).when({ kind: 'send', accountId: 'a1', scheduledAt: null, now: 'T1' })).to.deep.equal([started]);
    expect(given(campaignDecider, [created]).when({ kind: 'send', accountId: 'a1', scheduledAt: '2030-01-01T00:00:00.000Z', now: '2026-01-01T00:00:00.000Z' })).to.deep.equal([
      { type: 'CampaignScheduled', data: { campaignId: 'c1', scheduledAt: '2030-01-01T00:00:00.000Z' } },
    ]);
    // a time already past starts it at once
    expect(given(campaignDecider, [created]).when({ kind: 'send', accountId: 'a1', scheduledAt: '2020-01-01T00:00:00.000Z', now: '2026-01-01T00:00:00.000Z' })[0].type).to.equal('CampaignStarted');
  });

  it('a scheduled campaign starts when its time comes; start on anything else is a no-op', () => {
    const scheduled: CampaignEvent = { type: 'CampaignScheduled', data: { campaignId: 'c1', scheduledAt: 'T1' } };
    expect(given(campaignDecider, [created, scheduled]).when({ kind: 'start', now: 'T1' })).to.deep.equal([started]);
    expect(given(campaignDecider, [created, scheduled, cancelled]).when({ kind: 'start', now: 'T1' })).to.deep.equal([]);
    expect(given(campaignDecider, [created, started]).when({ kind: 'start', now: 'T1' })).to.deep.equal([]);
  });

  it('transitions that make no sense are refused with 409 naming the status', () => {
    expect(conflictOf(() => given(campaignDecider, [created, cancelled]).when({ kind: 'send', accountId: 'a1', scheduledAt: null, now: 'T' }))).to.equal('cannot send a campaign that is cancelled');
    expect(conflictOf(() => given(campaignDecider, [created, started, sent]).when({ kind: 'resume', accountId: 'a1', now: 'T' }))).to.equal('cannot resume a campaign that is sent');
    expect(conflictOf(() => given(campaignDecider, [created]).when({ kind: 'pause', accountId: 'a1', now: 'T' }))).to.equal('cannot pause a campaign that is draft');
    expect(conflictOf(() => given(campaignDecider, [created, started, sent]).when({ kind: 'cancel', accountId: 'a1', now: 'T' }))).to.equal('cannot cancel a campaign that is sent');
    expect(conflictOf(() => given(campaignDecider, [created, started]).when({ kind: 'send', accountId: 'a1', scheduledAt: null, now: 'T' }))).to.equal('cannot send a campaign that is sending');
  });

  it('another account does not find the campaign', () => {
    expect(() => given(campaignDecider, [created]).when({ kind: 'pause', accountId: 'a2', now: 'T' })).to.throw('campaign not found');
    expect(() => given(campaignDecider).when({ kind: 'cancel', accountId: 'a1', now: 'T' })).to.throw('campaign not found');
  });

  it('pause, resume and cancel; a repeated pause or cancel appends nothing', () => {
    expect(given(campaignDecider, [created, started]).when({ kind: 'pause', accountId: 'a1', now: 'T3' })).to.deep.equal([paused()]);
    expect(given(campaignDecider, [created, started, paused()]).when({ kind: 'pause', accountId: 'a1', now: 'T3' })).to.deep.equal([]);
    expect(given(campaignDecider, [created, started, paused()]).when({ kind: 'resume', accountId: 'a1', now: 'T4' })).to.deep.equal([
      { type: 'CampaignResumed', data: { campaignId: 'c1', resumedAt: 'T4', auto: false } },
    ]);
    expect(given(campaignDecider, [created, started, paused()]).when({ kind: 'cancel', accountId: 'a1', now: 'T4' })).to.deep.equal([cancelled]);
    expect(given(campaignDecider, [created, cancelled]).when({ kind: 'cancel', accountId: 'a1', now: 'T5' })).to.deep.equal([]);
  });

  it('paused before its scheduled start, a resume waits for that time again; after it, the resume is the start', () => {
    const scheduled: CampaignEvent = { type: 'CampaignScheduled', data: { campaignId: 'c1', scheduledAt: '2026-03-01T09:00:00.000Z' } };
    const early = given(campaignDecider, [created, scheduled, paused()]).when({ kind: 'resume', accountId: 'a1', now: '2026-03-01T08:00:00.000Z' });
    expect(early).to.deep.equal([
      { type: 'CampaignResumed', data: { campaignId: 'c1', resumedAt: '2026-03-01T08:00:00.000Z', auto: false, rescheduledFor: '2026-03-01T09:00:00.000Z' } },
    ]);
    const waiting = given(campaignDecider, [created, scheduled, paused(), ...early]);
    expect(waiting.state).to.include({ status: 'scheduled', started: false });
    // its time comes: the timer starts it as any scheduled campaign
    expect(waiting.when({ kind: 'start', now: '2026-03-01T09:00:01.000Z' })).to.deep.equal([{ type: 'CampaignStarted', data: { campaignId: 'c1', startedAt: '2026-03-01T09:00:01.000Z' } }]);

    const late = given(campaignDecider, [created, scheduled, paused()]).when({ kind: 'resume', accountId: 'a1', now: '2026-03-01T10:00:00.000Z' });
    expect(late).to.deep.equal([{ type: 'CampaignResumed', data: { campaignId: 'c1', resumedAt: '2026-03-01T10:00:00.000Z', auto: false } }]);
    const sending = given(campaignDecider, [created, scheduled, paused(), ...late]);
    expect(sending.state).to.include({ status: 'sending', started: true });
    // it has started: its audience is fixed, also once paused again
    const pausedAgain = given(campaignDecider, [created, scheduled, paused(), ...late, paused()]);
    expect(conflictOf(() => pausedAgain.when({ kind: 'edit', accountId: 'a1', changes: { audience: { listId: 'l2' } }, now: 'T' } as CampaignCommand))).to.equal(
      'cannot change the audience of a campaign that has started',
    );
  });

  it('the cap pause resumes by itself; a manual pause does not', () => {
    expect(given(campaignDecider, [created, started, paused('daily_send_cap')]).when({ kind: 'resumeAfterCap', now: 'T4' })).to.deep.equal([
      { type: 'CampaignResumed', data: { campaignId: 'c1', resumedAt: 'T4', auto: true } },
    ]);
    expect(given(campaignDecider, [created, started, paused('manual')]).when({ kind: 'resumeAfterCap', now: 'T4' })).to.deep.equal([]);
  });

  it("given a campaign the daily cap paused, when an admin pauses it, then the pause is the admin's: it waits for a resume, not for 00:00 UTC", () => {
    const capped = [created, started, paused('daily_send_cap')];
    const events = given(campaignDecider, capped).when({ kind: 'pause', accountId: 'a1', now: 'T4' });
    expect(events).to.deep.equal([{ type: 'CampaignPaused', data: { campaignId: 'c1', reason: 'manual', pausedAt: 'T4', resumeAt: null } }]);
    const after = given(campaignDecider, [...capped, ...events]);
    expect(after.state).to.include({ status: 'paused', pausedReason: 'manual' });
    expect(after.when({ kind: 'resumeAfterCap', now: 'T5' })).to.deep.equal([]);
    // paused by the admin already: nothing changes
    expect(after.when({ kind: 'pause', accountId: 'a1', now: 'T5' })).to.deep.equal([]);
  });

  it('given a campaign paused for what an admin must mend, when an admin pauses it, then nothing changes: it waits for a resume already, its reason says what to mend', () => {
    for (const reason of ['template_failed', 'template_deleted', 'sender_not_verified'] as const) {
      const stopped: CampaignEvent = { type: 'CampaignPaused', data: { campaignId: 'c1', reason, pausedAt: 'T3', resumeAt: null } };
      const { state, when } = given(campaignDecider, [created, started, stopped]);
      expect(when({ kind: 'pause', accountId: 'a1', now: 'T4' }), reason).to.deep.equal([]);
      expect(state.pausedReason).to.equal(reason);
    }
  });

  it('a step records its counts and goes on from where the last one stopped', () => {
    const { state } = given(campaignDecider, [created, started, progressed(null, 'k5')]);
    expect(state.progress).to.deep.equal({ cursor: 'k5', queued: 2, skipped: 1, unfilled: 0 });
    expect(given(campaignDecider, [created, started, progressed(null, 'k5')]).when(step('k5'))).to.deep.equal([
      { type: 'CampaignProgressed', data: { campaignId: 'c1', fromCursor: 'k5', cursor: 'k9', queued: 3, skipped: 1, unfilled: 2, continues: true, at: 'T5' } },
    ]);
  });

  it('a step that began from another cursor (a second worker on the same step) records nothing', () => {
    expect(given(campaignDecider, [created, started, progressed(null, 'k5')]).when(step(null))).to.deep.equal([]);
  });

  it('the last step sends the campaign; the first step carries the audience', () => {
    expect(given(campaignDecider, [created, started]).when(step(null, { done: true, audience: 4 }))).to.deep.equal([
      { type: 'CampaignProgressed', data: { campaignId: 'c1', fromCursor: null, cursor: 'k9', queued: 3, skipped: 1, unfilled: 2, audience: 4, continues: false, at: 'T5' } },
      { type: 'CampaignSent', data: { campaignId: 'c1', finishedAt: 'T5' } },
    ]);
  });

  it('a step stopped by the daily cap pauses the campaign until the next UTC day', () => {
    const events = given(campaignDecider, [created, started]).when(step(null, { stoppedBy: { reason: 'daily_send_cap', resumeAt: '2026-01-02T00:00:00.000Z' } }));
    expect(events.map((e) => e.type)).to.deep.equal(['CampaignProgressed', 'CampaignPaused']);
    expect((events[0].data as { continues: boolean }).continues).to.equal(false);
    expect(events[1].data).to.deep.equal({ campaignId: 'c1', reason: 'daily_send_cap', pausedAt: 'T5', resumeAt: '2026-01-02T00:00:00.000Z' });
  });

  it('the step under way when the campaign was paused or cancelled is recorded (its messages are queued) and does not go on', () => {
    for (const stop of [paused(), cancelled]) {
      const events = given(campaignDecider, [created, started, stop]).when(step(null));
      expect(events.map((e) => e.type)).to.deep.equal(['CampaignProgressed']);
      expect((events[0].data as { continues: boolean }).continues).to.equal(false);
    }
  });

  it('a cancelled campaign whose last step was under way stays cancelled, its counts recorded', () => {
    const events = given(campaignDecider, [created, started, cancelled]).when(step(null, { done: true, audience: 4 }));
    expect(events).to.deep.equal([
      { type: 'CampaignProgressed', data: { campaignId: 'c1', fromCursor: null, cursor: 'k9', queued: 3, skipped: 1, unfilled: 2, audience: 4, continues: false, at: 'T5' } },
    ]);
    expect(given(campaignDecider, [created, started, cancelled, ...events]).state.status).to.equal('cancelled');
  });

  it('a sent campaign takes no step: nothing was under way', () => {
    expect(given(campaignDecider, [created, started, progressed(null, 'k5', false), sent]).when(step('k5'))).to.deep.equal([]);
  });
  it('edit records only the fields that change, and the campaign goes on with them', () => {
    const events = given(campaignDecider, [created]).when({
      kind: 'edit',
      accountId: 'a1',
      changes: { name: 'Spring', templateId: 't2', audience: { listId: 'l1' }, variables: { code: 'X' } },
      now: 'T1',
    });
    expect(events).to.deep.equal([{ type: 'CampaignChanged', data: { campaignId: 'c1', changes: { templateId: 't2', variables: { code: 'X' } }, changedAt: 'T1' } }]);
    expect(given(campaignDecider, [created, ...events]).state.definition).to.deep.equal({ ...definition, templateId: 't2', variables: { code: 'X' } });
    // nothing different: nothing recorded
    expect(given(campaignDecider, [created]).when({ kind: 'edit', accountId: 'a1', changes: { name: 'Spring' }, now: 'T1' })).to.deep.equal([]);
  });

  it('a paused campaign that has started takes a new template or sender, but not a new audience (409)', () => {
    const history = [created, started, progressed(null, 'k1'), paused()];
    expect(given(campaignDecider, history).when({ kind: 'edit', accountId: 'a1', changes: { templateId: 't2' }, now: 'T5' }).map((e) => e.type)).to.deep.equal([
      'CampaignChanged',
    ]);
    expect(conflictOf(() => given(campaignDecider, history).when({ kind: 'edit', accountId: 'a1', changes: { audience: { tag: 'vip' } }, now: 'T5' }))).to.equal(
      'cannot change the audience of a campaign that has started',
    );
    // paused while only scheduled: nothing was sent yet, so its audience can still change
    const scheduled: CampaignEvent = { type: 'CampaignScheduled', data: { campaignId: 'c1', scheduledAt: '2030-01-01T00:00:00.000Z' } };
    expect(given(campaignDecider, [created, scheduled, paused()]).when({ kind: 'edit', accountId: 'a1', changes: { audience: { tag: 'vip' } }, now: 'T5' })).to.have.length(1);
  });

  it('a deleted draft is gone: every later command finds no campaign (404)', () => {
    const deleted = given(campaignDecider, [created]).when({ kind: 'delete', accountId: 'a1', now: 'T1' });
    expect(deleted).to.deep.equal([{ type: 'CampaignDeleted', data: { campaignId: 'c1', deletedAt: 'T1' } }]);
    for (const command of [
      { kind: 'send', accountId: 'a1', scheduledAt: null, now: 'T2' },
      { kind: 'edit', accountId: 'a1', changes: { name: 'x' }, now: 'T2' },
      { kind: 'delete', accountId: 'a1', now: 'T2' },
    ] as CampaignCommand[]) {
      expect(() => given(campaignDecider, [created, ...deleted]).when(command)).to.throw(AppError, 'campaign not found');
    }
  });

  it('takes exactly the actions campaignActions offers in each status; any other is a 409, a repeated pause or cancel is no change', () => {
    const histories: Record<string, CampaignEvent[]> = {
      draft: [created],
      scheduled: [created, { type: 'CampaignScheduled', data: { campaignId: 'c1', scheduledAt: '2030-01-01T00:00:00.000Z' } }],
      sending: [created, started],
      paused: [created, started, paused()],
      sent: [created, started, sent],
      cancelled: [created, cancelled],
    };
    const commands: Record<CampaignAction, CampaignCommand> = {
      send: { kind: 'send', accountId: 'a1', scheduledAt: null, now: 'T9' },
      pause: { kind: 'pause', accountId: 'a1', now: 'T9' },
      resume: { kind: 'resume', accountId: 'a1', now: 'T9' },
      cancel: { kind: 'cancel', accountId: 'a1', now: 'T9' },
      edit: { kind: 'edit', accountId: 'a1', changes: { name: 'Renamed' }, now: 'T9' },
      delete: { kind: 'delete', accountId: 'a1', now: 'T9' },
    };
    // the rules, stated once more as the spec they are
    const offers: Record<string, CampaignAction[]> = {
      draft: ['send', 'edit', 'delete', 'cancel'],
      scheduled: ['pause', 'edit', 'cancel'],
      sending: ['pause', 'cancel'],
      paused: ['resume', 'edit', 'cancel'],
      sent: [],
      cancelled: [],
    };
    for (const [status, history] of Object.entries(histories)) {
      const { state, when } = given(campaignDecider, history);
      expect(state.status).to.equal(status);
      expect(campaignActions(state.status!)).to.deep.equal(offers[status]);
      for (const [action, command] of Object.entries(commands) as [CampaignAction, CampaignCommand][]) {
        const offered = offers[status].includes(action);
        const noChange = (action === 'pause' && status === 'paused') || (action === 'cancel' && status === 'cancelled');
        if (offered) expect(when(command), `${action} when ${status}`).to.have.length.greaterThan(0);
        else if (noChange) expect(when(command), `${action} when ${status}`).to.deep.equal([]);
        else expect(conflictOf(() => when(command)), `${action} when ${status}`).to.equal(`cannot ${action} a campaign that is ${status}`);
      }
    }
  });
});
