import { expect } from 'chai';
import { campaignDecider, type CampaignCommand, type CampaignEvent } from '../../../src/domain/campaigns/campaign.js';
import { contactsSkipped, lateWalkSince, notReached } from '../../../src/domain/campaigns/late-joiners.js';
import { given, recorded } from '../../support/given.js';

const definition = { name: 'Spring', templateId: 't1', fromEmail: 'news@acme.test', fromName: null, replyTo: null, audience: { listId: 'l1' }, variables: {} };
const created: CampaignEvent = { type: 'CampaignCreated', data: { ...definition, campaignId: 'c1', accountId: 'a1', createdBy: 'user:u1', createdAt: 'T0' } };
const started: CampaignEvent = { type: 'CampaignStarted', data: { campaignId: 'c1', startedAt: '2026-03-01T09:00:00.000Z' } };
const lastStep = (skippedIds?: string[]): CampaignCommand => ({
  kind: 'recordProgress',
  fromCursor: null,
  progress: { cursor: 'k9', queued: 3, skipped: 1, unfilled: 0 },
  ...(skippedIds ? { skippedIds } : {}),
  done: true,
  now: 'T2',
});
const walked = (): CampaignEvent[] => given(campaignDecider, [created, started]).when(lastStep(['k4']));
const at = (changedAt: string, id: string) => ({ changedAt, id });
const look = (fromAfter: ReturnType<typeof at> | null, after: ReturnType<typeof at> | null, contactIds: string[], more = false): CampaignCommand => ({
  kind: 'recordLateJoiners',
  fromAfter,
  after,
  contactIds,
  more,
  now: 'T3',
});

describe('the late walk: contacts that join the audience while it sends', () => {
  it('given the walk in id order at its last step, when recorded naming its skipped contacts, then it is not sent yet: the late walk follows', () => {
    const events = walked();
    expect(events).to.deep.equal([
      {
        type: 'CampaignProgressed',
        data: { campaignId: 'c1', fromCursor: null, cursor: 'k9', queued: 3, skipped: 1, unfilled: 0, skippedIds: ['k4'], walked: true, continues: true, at: 'T2' },
      },
    ]);
    const { state } = given(campaignDecider, [created, started, ...events]);
    expect(state).to.deep.include({ status: 'sending', startedAt: '2026-03-01T09:00:00.000Z', late: { after: null, pending: [] } });
    // the walk in id order is over: a step of it again records nothing
    expect(given(campaignDecider, [created, started, ...events]).when({ ...lastStep(['k4']), fromCursor: 'k9' } as CampaignCommand)).to.deep.equal([]);
  });

  it('given an earlier step that did not name its skipped contacts (recorded by an earlier version), when the last step is recorded, then sent at once as before', () => {
    const older: CampaignEvent = { type: 'CampaignProgressed', data: { campaignId: 'c1', fromCursor: null, cursor: 'k2', queued: 1, skipped: 1, unfilled: 0, continues: true, at: 'T1' } };
    const events = given(campaignDecider, [created, started, older]).when({ ...lastStep(['k4']), fromCursor: 'k2' } as CampaignCommand);
    expect(events.map((e) => e.type)).to.deep.equal(['CampaignProgressed', 'CampaignSent']);
    expect(events[0].data).to.not.have.property('walked');
  });

  it('given the late walk, when a look finds contacts not reached, then they wait for the next step; where it looked from again records nothing', () => {
    const history = [created, started, ...walked()];
    const found = given(campaignDecider, history).when(look(null, at('2026-03-01 09:00:01.5+00', 'j7'), ['j3', 'j7'], true));
    expect(found).to.deep.equal([
      { type: 'CampaignLateJoinersFound', data: { campaignId: 'c1', fromAfter: null, after: at('2026-03-01 09:00:01.5+00', 'j7'), contactIds: ['j3', 'j7'], continues: true, at: 'T3' } },
    ]);
    const then = given(campaignDecider, [...history, ...found]);
    expect(then.state.late).to.deep.equal({ after: at('2026-03-01 09:00:01.5+00', 'j7'), pending: ['j3', 'j7'] });
    // contacts are waiting: no other look is taken before they are reached
    expect(then.when(look(at('2026-03-01 09:00:01.5+00', 'j7'), null, []))).to.deep.equal([]);
    expect(then.when(look(null, null, []))).to.deep.equal([]);
  });

  it('given contacts found, when a step reaches the first of them and the daily cap stops it, then those counted add up, the rest wait, and it pauses', () => {
    const history = [created, started, ...walked()];
    const found = given(campaignDecider, history).when(look(null, at('t1', 'j9'), ['j3', 'j7', 'j9']));
    const reached: CampaignCommand = {
      kind: 'recordLateProgress',
      first: 'j3',
      progress: { cursor: 'j3', queued: 0, skipped: 1, unfilled: 0 },
      skippedIds: ['j3'],
      stoppedBy: { reason: 'daily_send_cap', resumeAt: '2026-03-02T00:00:00.000Z' },
      now: 'T4',
    };
    const events = given(campaignDecider, [...history, ...found]).when(reached);
    expect(events).to.deep.equal([
      { type: 'CampaignProgressed', data: { campaignId: 'c1', fromCursor: 'j3', cursor: 'j3', queued: 0, skipped: 1, unfilled: 0, skippedIds: ['j3'], late: true, continues: false, at: 'T4' } },
      { type: 'CampaignPaused', data: { campaignId: 'c1', reason: 'daily_send_cap', pausedAt: 'T4', resumeAt: '2026-03-02T00:00:00.000Z' } },
    ]);
    const { state, when } = given(campaignDecider, [...history, ...found, ...events]);
    expect(state.late).to.deep.equal({ after: at('t1', 'j9'), pending: ['j7', 'j9'] });
    expect(state.progress).to.deep.equal({ cursor: 'k9', queued: 3, skipped: 2, unfilled: 0 });
    // the same step again (a second worker): it began from a contact no longer first
    expect(when(reached)).to.deep.equal([]);
  });

  it('given every contact found reached, when a look finds nobody and no contact changed after it, then the campaign is sent; with more after it, the walk goes on', () => {
    const history = [created, started, ...walked()];
    const found = given(campaignDecider, history).when(look(null, at('t1', 'j3'), ['j3']));
    const reached = given(campaignDecider, [...history, ...found]).when({
      kind: 'recordLateProgress',
      first: 'j3',
      progress: { cursor: 'j3', queued: 1, skipped: 0, unfilled: 0 },
      skippedIds: [],
      now: 'T4',
    });
    expect((reached[0].data as { continues: boolean }).continues).to.equal(true);
    const all = [...history, ...found, ...reached];
    expect(given(campaignDecider, all).state.late).to.deep.equal({ after: at('t1', 'j3'), pending: [] });
    expect(given(campaignDecider, all).when(look(at('t1', 'j3'), at('t2', 'x1'), [], true))[0]).to.deep.include({ type: 'CampaignLateJoinersFound' });
    const last = given(campaignDecider, all).when(look(at('t1', 'j3'), at('t1', 'j3'), []));
    expect(last.map((e) => e.type)).to.deep.equal(['CampaignLateJoinersFound', 'CampaignSent']);
    expect((last[0].data as { continues: boolean }).continues).to.equal(false);
    expect(given(campaignDecider, [...all, ...last]).state.progress).to.deep.equal({ cursor: 'k9', queued: 4, skipped: 1, unfilled: 0 });
  });

  it('given the campaign paused while a look was under way, when it finds nobody, then it is recorded and the campaign stays paused', () => {
    const paused: CampaignEvent = { type: 'CampaignPaused', data: { campaignId: 'c1', reason: 'manual', pausedAt: 'T3', resumeAt: null } };
    const events = given(campaignDecider, [created, started, ...walked(), paused]).when(look(null, null, []));
    expect(events.map((e) => e.type)).to.deep.equal(['CampaignLateJoinersFound']);
    expect((events[0].data as { continues: boolean }).continues).to.equal(false);
  });

  it('the contacts a campaign skipped are those its steps named; of those changed since it began, the ones neither queued for nor skipped are not reached', () => {
    const history = recorded('campaign-c1', [created, started, ...walked(), { type: 'CampaignProgressed', data: { campaignId: 'c1', fromCursor: 'j1', cursor: 'j1', queued: 0, skipped: 1, unfilled: 0, skippedIds: ['j1'], late: true, continues: true, at: 'T5' } }]);
    const skipped = contactsSkipped(history);
    expect([...skipped].sort()).to.deep.equal(['j1', 'k4']);
    expect(notReached(['k1', 'k4', 'j1', 'j2', 'j5'], new Set(['k1', 'j5']), skipped)).to.deep.equal(['j2']);
  });

  it('the late walk looks at changes from a minute before the fan-out began (a change is timed by another process before the read model shows it)', () => {
    expect(lateWalkSince('2026-03-01T09:00:00.000Z')).to.equal('2026-03-01T08:59:00.000Z');
  });
});
