import { expect } from 'chai';
import type { EmailQueued, SmsQueued } from '../../../src/domain/messages/events.js';
import { admitProviderEvent, type ProviderEventOrigin } from '../../../src/domain/provider-events/event-admission.js';

const email = (over: Partial<EmailQueued['data']> = {}) => ({ provider: 'ses', to: 'Reader@Example.org', accountId: 'a1', ...over }) as EmailQueued['data'];
const sent = (providerMessageId: string | null, over: Partial<EmailQueued['data']> = {}, status = providerMessageId ? 'sent' : 'queued') => ({
  queued: email(over),
  channel: 'email' as const,
  providerMessageId,
  status,
  person: 'hash-of-reader',
});
const origin = (over: Partial<ProviderEventOrigin> = {}): ProviderEventOrigin => ({ provider: 'ses', providerMessageId: 'ses-1', recipient: 'reader@example.org', receivedAt: '2026-11-27T12:00:00.000Z', ...over });

describe('provider event admission (does the event agree with the message it names?)', () => {
  it('admits an event of the provider the message went out through, naming its provider id and its recipient (in any case)', () => {
    expect(admitProviderEvent(sent('ses-1'), origin())).to.deep.equal({ ok: true });
    expect(admitProviderEvent(sent('ses-1'), origin({ recipient: ' READER@example.ORG ' }))).to.deep.equal({ ok: true });
    expect(admitProviderEvent(sent('pm-1', { provider: 'postmark' }), origin({ provider: 'postmark', providerMessageId: 'pm-1' }))).to.deep.equal({ ok: true });
  });

  it('before the provider id is recorded, admits any the event names (it proves the acceptance), but not none', () => {
    expect(admitProviderEvent(sent(null), origin({ providerMessageId: 'ses-lost' }))).to.deep.equal({ ok: true });
    expect(admitProviderEvent(sent(null), origin({ providerMessageId: null }))).to.deep.equal({ ok: false, reason: 'event names no provider message id' });
  });

  it('refuses another recipient: a bounce never suppresses anyone but the message’s recipient', () => {
    expect(admitProviderEvent(sent('ses-1'), origin({ recipient: 'victim@example.org' }))).to.deep.equal({ ok: false, reason: "recipient is not the message's recipient" });
  });

  it('once the message’s address reads as null (erased, or past retention), compares the recipient by keyed hash', () => {
    const forgotten = sent('ses-1', { to: null as unknown as string });
    expect(admitProviderEvent(forgotten, origin({ person: 'hash-of-reader' }))).to.deep.equal({ ok: true });
    expect(admitProviderEvent(forgotten, origin({ recipient: 'victim@example.org', person: 'hash-of-victim' }))).to.deep.equal({ ok: false, reason: "recipient is not the message's recipient" });
    // nothing to compare with: no hash of the report's recipient, or none recorded for the message
    expect(admitProviderEvent(forgotten, origin()).ok).to.equal(false);
    expect(admitProviderEvent({ ...forgotten, person: null }, origin({ person: 'hash-of-reader' })).ok).to.equal(false);
    // while the address can be read, it decides (a hash that disagrees does not matter)
    expect(admitProviderEvent(sent('ses-1'), origin({ person: 'hash-of-someone' }))).to.deep.equal({ ok: true });
  });

  it('refuses an event of another provider than the message’s, and any event about an SMS or a sandbox message', () => {
    expect(admitProviderEvent(sent('ses-1'), origin({ provider: 'postmark' })).ok).to.equal(false);
    expect(admitProviderEvent(sent('pm-1', { provider: 'postmark' }), origin({ providerMessageId: 'pm-1' })).ok).to.equal(false);
    expect(admitProviderEvent(sent('sb-1', { provider: 'sandbox' }), origin({ providerMessageId: 'sb-1' })).ok).to.equal(false);
    const sms = { queued: { provider: 'sns', to: '+14155550100' } as SmsQueued['data'], channel: 'sms' as const, providerMessageId: 'sns-1', status: 'sent', person: 'p' };
    expect(admitProviderEvent(sms, origin({ providerMessageId: 'sns-1', recipient: '+14155550100' })).ok).to.equal(false);
  });

  it('refuses an event proving a send that cannot have happened: a message cancelled, or scheduled for later (beyond clock skew), before any acceptance', () => {
    const scheduled = (sendAt: string) => sent(null, { sendAt }, 'scheduled');
    expect(admitProviderEvent(scheduled('2026-11-27T12:05:00.000Z'), origin())).to.deep.equal({ ok: false, reason: 'message is scheduled for later and was not sent yet' });
    // its time has come (as far as two clocks can tell): the worker may be sending it
    expect(admitProviderEvent(scheduled('2026-11-27T12:00:30.000Z'), origin()).ok).to.equal(true);
    expect(admitProviderEvent(scheduled('2026-11-27T11:00:00.000Z'), origin()).ok).to.equal(true);
    expect(admitProviderEvent(sent(null, {}, 'cancelled'), origin())).to.deep.equal({ ok: false, reason: 'message was cancelled before it was sent' });
    // accepted already: the event is about that send, whenever it comes
    expect(admitProviderEvent(sent('ses-1', { sendAt: '2026-11-27T12:05:00.000Z' }), origin()).ok).to.equal(true);
  });

  it('refuses a provider id other than the one recorded for the message', () => {
    expect(admitProviderEvent(sent('ses-1'), origin({ providerMessageId: 'ses-2' }))).to.deep.equal({ ok: false, reason: "provider message id ses-2 is not the message's" });
  });

  it('refuses an event about no message', () => {
    expect(admitProviderEvent({ queued: null, channel: null, providerMessageId: null, status: null, person: null }, origin()).ok).to.equal(false);
  });
});
