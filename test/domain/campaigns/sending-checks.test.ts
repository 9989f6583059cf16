import { expect } from 'chai';
import { campaignDecider, type CampaignCommand, type CampaignEvent } from '../../../src/domain/campaigns/campaign.js';
import { sendingChecks } from '../../../src/domain/campaigns/sending-checks.js';
import { given } from '../../support/given.js';

const definition = { name: 'Spring', templateId: 't1', fromEmail: 'news@acme.test', fromName: null, replyTo: null, audience: { listId: 'l1' }, variables: {} };
const created: CampaignEvent = { type: 'CampaignCreated', data: { ...definition, campaignId: 'c1', accountId: 'a1', createdBy: 'user:u1', createdAt: 'T0' } };
const started: CampaignEvent = { type: 'CampaignStarted', data: { campaignId: 'c1', startedAt: 'T1' } };
const pausedFor = (reason: 'manual' | 'template_deleted'): CampaignEvent => ({ type: 'CampaignPaused', data: { campaignId: 'c1', reason, pausedAt: 'T2', resumeAt: null } });
const cancelled: CampaignEvent = { type: 'CampaignCancelled', data: { campaignId: 'c1', cancelledAt: 'T3' } };

/** given the events, when the command: what its decision sends from, to check again (or the decider's refusal) */
function checksOf(events: CampaignEvent[], command: CampaignCommand) {
  const { state, when } = given(campaignDecider, events);
  return sendingChecks(state, when(command));
}
const send: CampaignCommand = { kind: 'send', accountId: 'a1', scheduledAt: null, now: 'T5' };
const edit = (changes: Record<string, unknown>): CampaignCommand => ({ kind: 'edit', accountId: 'a1', changes, now: 'T5' });

describe('what a campaign change sends from, to check before it is recorded', () => {
  it('given a draft, when sent now or scheduled, then its template and its sender', () => {
    expect(checksOf([created], send)).to.deep.equal({ templateId: 't1', fromEmail: 'news@acme.test' });
    expect(checksOf([created], { ...send, scheduledAt: '2030-01-01T00:00:00.000Z', now: '2026-01-01T00:00:00.000Z' } as CampaignCommand)).to.deep.equal({
      templateId: 't1',
      fromEmail: 'news@acme.test',
    });
  });

  it('given a campaign paused for its deleted template, when given a new sender alone, then the sender only', () => {
    expect(checksOf([created, started, pausedFor('template_deleted')], edit({ fromEmail: 'other@acme.test' }))).to.deep.equal({ fromEmail: 'other@acme.test' });
    expect(checksOf([created, started, pausedFor('template_deleted')], edit({ templateId: 't2' }))).to.deep.equal({ templateId: 't2' });
  });

  it('given a draft, when a change leaves template and sender as they are, then nothing', () => {
    expect(checksOf([created], edit({ name: 'Autumn' }))).to.deep.equal({});
    expect(checksOf([created], edit({ templateId: 't1', fromEmail: 'news@acme.test' }))).to.deep.equal({});
  });

  it('given a status the change makes no sense from, then its 409 comes before any check', () => {
    expect(() => checksOf([created, cancelled], send)).to.throw('cannot send a campaign that is cancelled');
    expect(() => checksOf([created, cancelled], edit({ fromEmail: 'x@not-verified.org' }))).to.throw('cannot edit a campaign that is cancelled');
    expect(() => checksOf([created, started], edit({ templateId: 'doesnotexist' }))).to.throw('cannot edit a campaign that is sending');
  });
});
