import { expect } from 'chai';
import { suppressionDecider, webhookEventFor, webhookSourceOf, type AddressSuppressed } from '../../../src/domain/suppression/suppression.js';
import { AppError } from '../../../src/domain/errors.js';
import { given } from '../../support/given.js';

const data = {
  accountId: 'a1',
  value: 'r@example.org',
  kind: 'email',
  reason: 'bounced',
  source: 'bounce',
  messageId: 'm1',
  campaignId: null,
  detail: null,
  occurredAt: 't',
} satisfies AddressSuppressed['data'];

describe('suppression decisions', () => {
  it('suppresses once; a repeated bounce or unsubscribe appends nothing', () => {
    expect(given(suppressionDecider).when({ kind: 'suppress', data })).to.deep.equal([{ type: 'AddressSuppressed', data }]);
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data }]).when({ kind: 'suppress', data: { ...data, reason: 'unsubscribed' } })).to.deep.equal([]);
  });

  it("records a provider's complaint or hard bounce over a lesser reason (so its webhook fires), never the reverse nor from an import", () => {
    const unsubscribed = { ...data, reason: 'unsubscribed', source: 'form' } satisfies AddressSuppressed['data'];
    const complaint = { ...data, reason: 'complained', source: 'complaint', messageId: 'm2' } satisfies AddressSuppressed['data'];
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data: unsubscribed }]).when({ kind: 'suppress', data: complaint })).to.deep.equal([{ type: 'AddressSuppressed', data: complaint }]);
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data: unsubscribed }]).when({ kind: 'suppress', data })).to.deep.equal([{ type: 'AddressSuppressed', data }]);
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data }]).when({ kind: 'suppress', data: complaint })).to.have.length(1);
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data: complaint }]).when({ kind: 'suppress', data })).to.deep.equal([]);
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data: complaint }]).when({ kind: 'suppress', data: { ...complaint, messageId: 'm3' } })).to.deep.equal([]);
    const imported = { ...complaint, source: 'import' } satisfies AddressSuppressed['data'];
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data: unsubscribed }]).when({ kind: 'suppress', data: imported })).to.deep.equal([]);
  });

  it('lifts an active suppression, after which it can be suppressed again', () => {
    const lift = { kind: 'lift' as const, accountId: 'a1', value: data.value, addressKind: 'email' as const, now: 't2', by: 'user:u' };
    const lifted = given(suppressionDecider, [{ type: 'AddressSuppressed', data }]).when(lift);
    expect(lifted[0].type).to.equal('SuppressionLifted');
    expect(given(suppressionDecider, [{ type: 'AddressSuppressed', data }, ...lifted]).when({ kind: 'suppress', data })).to.have.length(1);
    expect(() => given(suppressionDecider).when(lift)).to.throw(AppError).with.property('status', 404);
  });

  const of = (reason: AddressSuppressed['data']['reason'], source: AddressSuppressed['data']['source'], more: Partial<AddressSuppressed['data']> = {}) =>
    webhookEventFor({ reason, source, value: 'x@example.org', ...more });

  it('maps reasons to the four contact.* webhook events', () => {
    expect(of('bounced', 'bounce')).to.equal('contact.bounced');
    expect(of('complained', 'complaint')).to.equal('contact.complained');
    expect(of('unsubscribed', 'one_click')).to.equal('contact.unsubscribed');
    expect(of('manual', 'manual')).to.equal('contact.suppressed');
    expect(of('sms_optout', 'sms_optout')).to.equal('contact.suppressed');
  });

  it('calls every imported entry contact.suppressed, whatever reason it was brought with; a quiet import fires nothing', () => {
    for (const reason of ['bounced', 'complained', 'unsubscribed', 'manual'] as const) {
      expect(of(reason, 'import'), reason).to.equal('contact.suppressed');
      expect(of(reason, 'import', { quiet: true }), reason).to.equal(null);
    }
  });

  it("names an imported entry's source manual to receivers (an admin's act); every other source as it is", () => {
    expect(webhookSourceOf('import')).to.equal('manual');
    for (const source of ['one_click', 'form', 'bounce', 'complaint', 'manual', 'sms_optout'] as const) expect(webhookSourceOf(source)).to.equal(source);
  });

  it("fires nothing for an erased person's unsubscribe: no address is left to name", () => {
    expect(of('unsubscribed', 'one_click', { value: null })).to.equal(null);
  });
});
