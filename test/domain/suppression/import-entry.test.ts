import { expect } from 'chai';
import { checkSuppressionImport } from '../../../src/domain/suppression/import-entry.js';

describe('suppression import: which entries are taken', () => {
  it('takes addresses and numbers in their normal form, with the reason given or manual, and a note', () => {
    const { valid, errors, repeated } = checkSuppressionImport([
      { email: ' Bob@Example.ORG ', reason: 'bounced', detail: 'HardBounce at the old provider' },
      { phone: '(415) 555-0100' },
      { email: 'carol@example.org', reason: 'unsubscribed', detail: '' },
    ]);
    expect(errors).to.deep.equal([]);
    expect(repeated).to.equal(0);
    expect(valid).to.deep.equal([
      { index: 0, value: 'bob@example.org', kind: 'email', reason: 'bounced', detail: 'HardBounce at the old provider' },
      { index: 1, value: '+14155550100', kind: 'phone', reason: 'manual', detail: null },
      { index: 2, value: 'carol@example.org', kind: 'email', reason: 'unsubscribed', detail: null },
    ]);
  });

  it('lists each bad entry by index with what is wrong, and keeps the good ones', () => {
    const { valid, errors } = checkSuppressionImport([
      { email: 'not an address' },
      { email: 'a@example.org', phone: '+14155550100' },
      {},
      { phone: '12' },
      { email: 'b@example.org', reason: 'sms_optout' },
      { email: 'c@example.org', colour: 'blue' },
      'd@example.org',
      { email: 'ok@example.org' },
    ]);
    expect(valid.map((v) => v.value)).to.deep.equal(['ok@example.org']);
    expect(errors.map((e) => e.index)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
    expect(errors[0]).to.include({ value: 'not an address' });
    expect(errors[0].message).to.match(/^email: /);
    expect(errors[1].message).to.equal('give exactly one of email or phone');
    expect(errors[3].message).to.equal('phone: 12 is not a valid phone number (E.164, or a 10-digit US number)');
    expect(errors[4].message).to.match(/^reason: /);
    expect(errors[5].message).to.match(/colour/);
    expect(errors[6]).to.not.have.property('value');
  });

  it('suppresses an address listed twice once, by its first entry, and counts the repeats', () => {
    const { valid, repeated } = checkSuppressionImport([
      { email: 'x@example.org', reason: 'bounced' },
      { email: 'X@example.org', reason: 'complained' },
      { phone: '+14155550100' },
      { phone: '4155550100' },
    ]);
    expect(valid.map((v) => [v.index, v.value, v.reason])).to.deep.equal([
      [0, 'x@example.org', 'bounced'],
      [2, '+14155550100', 'manual'],
    ]);
    expect(repeated).to.equal(2);
  });
});
