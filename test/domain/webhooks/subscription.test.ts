import { expect } from 'chai';
import { AppError } from '../../../src/domain/errors.js';
import { signingSecret, webhookSubscriptionDecider, type WebhookSubscriptionEvent } from '../../../src/domain/webhooks/subscription.js';
import { given } from '../../support/given.js';

const subscribed: WebhookSubscriptionEvent = {
  type: 'WebhookSubscribed',
  data: { id: 'w1', accountId: 'a1', url: 'https://hooks.example.com/x', events: ['contact.bounced'], secret: 'whsec_old', createdAt: '2026-11-01T00:00:00.000Z' },
};
const rotate = (secret: string, now: string, activeAt?: string) => ({ kind: 'rotateSecret' as const, id: 'w1', accountId: 'a1', secret, now, ...(activeAt ? { activeAt } : {}) });
const NOW = '2026-11-27T10:00:00.000Z';

describe('webhook subscription: rotating the signing secret', () => {
  it('given an endpoint, when its secret is rotated with no time, then the new one signs at once', () => {
    const [event] = given(webhookSubscriptionDecider, [subscribed]).when(rotate('whsec_new', NOW));
    expect(event).to.deep.equal({ type: 'WebhookSecretRotated', data: { id: 'w1', accountId: 'a1', secret: 'whsec_new', next: null, nextAt: null, rotatedAt: NOW } });
  });

  it('when rotated to take effect later, then the old one signs until then and the new one after', () => {
    const [event] = given(webhookSubscriptionDecider, [subscribed]).when(rotate('whsec_new', NOW, '2026-11-27T11:00:00Z'));
    expect(event.data).to.deep.include({ secret: 'whsec_old', next: 'whsec_new', nextAt: '2026-11-27T11:00:00.000Z' });
    const signing = event.data as { secret: string; next: string; nextAt: string };
    expect(signingSecret(signing, new Date('2026-11-27T10:59:59.999Z'))).to.equal('whsec_old');
    expect(signingSecret(signing, new Date('2026-11-27T11:00:00.000Z'))).to.equal('whsec_new');
  });

  it('given a rotation pending, when rotated again, then the pending one is dropped; given one whose time came, it is the secret the next rotation keeps', () => {
    const pending = given(webhookSubscriptionDecider, [subscribed]).when(rotate('whsec_2', NOW, '2026-11-27T12:00:00Z'));
    const [before] = given(webhookSubscriptionDecider, [subscribed, ...pending]).when(rotate('whsec_3', '2026-11-27T11:00:00.000Z', '2026-11-27T13:00:00Z'));
    expect(before.data).to.deep.include({ secret: 'whsec_old', next: 'whsec_3' });
    const [after] = given(webhookSubscriptionDecider, [subscribed, ...pending]).when(rotate('whsec_3', '2026-11-27T12:30:00.000Z', '2026-11-27T13:00:00Z'));
    expect(after.data).to.deep.include({ secret: 'whsec_2', next: 'whsec_3' });
    // the state folds to what the last rotation said
    const state = given(webhookSubscriptionDecider, [subscribed, ...pending]).state.subscription!;
    expect([state.secret, state.next, state.nextAt]).to.deep.equal(['whsec_old', 'whsec_2', '2026-11-27T12:00:00.000Z']);
  });

  it('refuses a switch more than 7 days ahead; a time already past is now; another account or a removed endpoint is 404', () => {
    expect(() => given(webhookSubscriptionDecider, [subscribed]).when(rotate('whsec_new', NOW, '2026-12-04T10:00:00.001Z')))
      .to.throw(AppError, 'activeAt: at most 7 days ahead')
      .with.property('details')
      .that.deep.equals({ issues: [{ field: 'activeAt', message: 'at most 7 days ahead' }] });
    expect(given(webhookSubscriptionDecider, [subscribed]).when(rotate('whsec_new', NOW, '2026-11-27T09:00:00Z'))[0].data).to.deep.include({ secret: 'whsec_new', next: null });
    expect(() => given(webhookSubscriptionDecider, [subscribed]).when({ ...rotate('whsec_new', NOW), accountId: 'a2' })).to.throw(AppError).with.property('status', 404);
    const removed: WebhookSubscriptionEvent = { type: 'WebhookRemoved', data: { id: 'w1', accountId: 'a1', removedAt: NOW } };
    expect(() => given(webhookSubscriptionDecider, [subscribed, removed]).when(rotate('whsec_new', NOW))).to.throw(AppError).with.property('status', 404);
  });
});
