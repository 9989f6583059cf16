import { expect } from 'chai';
import { keyScopeName, normaliseAddress, PERSONAL_DATA, personalPart, redact, retentionCutoff } from '../../../src/domain/privacy/personal-data.js';

describe('personal data in events', () => {
  it('message content is the recipient’s, under a key of its day; contact fields and suppressions under their profile key', () => {
    const at = new Date('2030-05-06T23:59:59Z');
    expect(PERSONAL_DATA.EmailQueued.owner({ accountId: 'a', to: 'x@y.z' })).to.deep.equal({ accountId: 'a', address: 'x@y.z' });
    expect(keyScopeName(PERSONAL_DATA.EmailQueued, at)).to.equal('2030-05-06');
    expect(keyScopeName(PERSONAL_DATA.SmsQueued, at)).to.equal('2030-05-06');
    expect(PERSONAL_DATA.Delivered.owner({})).to.equal('stream');
    for (const type of ['ContactUpserted', 'AddressSuppressed', 'SuppressionLifted']) expect(keyScopeName(PERSONAL_DATA[type], at), type).to.equal('profile');
  });

  it('seals what names or speaks of the person, never what counts, statuses and aggregates need', () => {
    const { personal, rest } = personalPart(PERSONAL_DATA.EmailQueued, {
      to: 't', subject: 's', html: 'h', text: 'x', headers: [], attachments: [], unsubscribeUrl: 'https://shop.example/u?email=t', accountId: 'a', status: 'queued', campaignId: 'c', tags: ['k'], provider: 'sandbox',
    });
    expect(Object.keys(personal).sort()).to.deep.equal(['attachments', 'headers', 'html', 'subject', 'text', 'to', 'unsubscribeUrl']);
    expect(rest).to.deep.equal({ accountId: 'a', status: 'queued', campaignId: 'c', tags: ['k'], provider: 'sandbox' });
    const outcome = personalPart(PERSONAL_DATA.Opened, { recipient: 'r', ip: '1.2.3.4', userAgent: 'ua', suspectedBot: false, occurredAt: 't' });
    expect(outcome.rest).to.deep.equal({ suspectedBot: false, occurredAt: 't' });
  });

  it('a redacted outcome loses the address or link an earlier version ended its provider event id with; an id of this version stays', () => {
    expect(redact(PERSONAL_DATA.Delivered, { providerEventId: 'pm:delivery:pm-1:ada@example.org', recipient: 'ada@example.org' })).to.deep.include({
      providerEventId: 'pm:delivery:pm-1',
      recipient: null,
    });
    expect(redact(PERSONAL_DATA.Clicked, { providerEventId: 'pm:click:pm-1:0123456789abcdef0123456789abcdef', url: 'https://example.com/a' })).to.deep.include({
      providerEventId: 'pm:click:pm-1:0123456789abcdef0123456789abcdef',
      url: null,
    });
  });

  it('a redacted event keeps its other fields, with the personal ones null (attachments left out)', () => {
    expect(redact(PERSONAL_DATA.EmailQueued, { accountId: 'a', queuedAt: 't' })).to.deep.equal({ accountId: 'a', queuedAt: 't', to: null, subject: null, html: null, text: null, headers: [], unsubscribeUrl: null });
    expect(redact(PERSONAL_DATA.ContactUpserted, { contactId: 'c', email: 'e', fields: {} })).to.deep.equal({ contactId: 'c', email: null, fields: null });
  });

  it('an address is one person however it is spelled; a phone number is itself', () => {
    expect(normaliseAddress('  Ada@Example.org ')).to.equal('ada@example.org');
    expect(normaliseAddress('+15550100')).to.equal('+15550100');
  });

  it('retention of N days makes every day before (today - N) unreadable', () => {
    expect(retentionCutoff(30, new Date('2030-03-31T10:00:00Z'))).to.equal('2030-03-01');
    expect(retentionCutoff(1, new Date('2030-01-01T00:00:00Z'))).to.equal('2029-12-31');
  });
});
