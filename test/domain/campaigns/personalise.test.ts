import { expect } from 'chai';
import { campaignMessageId, nextUtcMidnight } from '../../../src/domain/campaigns/personalise.js';
import { recipientVariables, unfilledPlaceholders } from '../../../src/domain/campaigns/recipient-variables.js';

describe('campaign personalisation', () => {
  it('one message id per campaign and contact, the same every time, valid as a message id', () => {
    expect(campaignMessageId('c1', 'k1')).to.equal(campaignMessageId('c1', 'k1'));
    expect(campaignMessageId('c1', 'k1')).to.not.equal(campaignMessageId('c1', 'k2'));
    expect(campaignMessageId('c1', 'k1')).to.not.equal(campaignMessageId('c2', 'k1'));
    expect(campaignMessageId('c1', 'k1')).to.match(/^[\w.:-]{1,100}$/);
  });

  it("the contact's fields win over the campaign's variables; fields it lacks leave the variable", () => {
    expect(recipientVariables({ firstName: 'friend', offer: '20%' }, { email: 'a@x.org', firstName: 'Ada', lastName: null, company: '' })).to.deep.equal({
      firstName: 'Ada',
      offer: '20%',
      email: 'a@x.org',
    });
    expect(recipientVariables({ firstName: 'friend' }, { email: 'a@x.org', firstName: null, lastName: null, company: null }).firstName).to.equal('friend');
  });

  it('counts the placeholders that render empty, across subject, html and text', () => {
    const parts = { subject: 'Hi {{firstName}}', html: '<p>{{company}} {{{raw}}}</p>', text: '{{#vip}}{{perk}}{{/vip}}{{^vip}}{{fallback}}{{/vip}}' };
    expect(unfilledPlaceholders(parts, { firstName: 'Ada', company: 'Engines', raw: 'x', fallback: 'y' })).to.equal(0);
    expect(unfilledPlaceholders(parts, { firstName: '' })).to.equal(4);
    expect(unfilledPlaceholders({ subject: 'plain', html: '', text: '' }, {})).to.equal(0);
  });

  it('the daily cap opens again at the next 00:00 UTC', () => {
    expect(nextUtcMidnight(new Date('2031-05-04T22:00:00.000Z')).toISOString()).to.equal('2031-05-05T00:00:00.000Z');
    expect(nextUtcMidnight(new Date('2031-12-31T00:00:00.000Z')).toISOString()).to.equal('2032-01-01T00:00:00.000Z');
  });
});
