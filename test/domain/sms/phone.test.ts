import { expect } from 'chai';
import { parsePhoneNumber } from '../../../src/domain/sms/phone.js';

describe('phone numbers (E.164, a 10-digit US number is accepted)', () => {
  it('keeps a valid E.164 number of any country, spaces and punctuation removed', () => {
    expect(parsePhoneNumber('+14155550100')).to.equal('+14155550100');
    expect(parsePhoneNumber('+1 (415) 555-0100')).to.equal('+14155550100');
    expect(parsePhoneNumber('  +14155550100 ')).to.equal('+14155550100');
    expect(parsePhoneNumber('+33612345678')).to.equal('+33612345678');
    expect(parsePhoneNumber('+4915112345678')).to.equal('+4915112345678');
  });

  it('reads a 10-digit US number (and 1 + 10 digits) as +1…', () => {
    expect(parsePhoneNumber('4155550100')).to.equal('+14155550100');
    expect(parsePhoneNumber('(415) 555-0100')).to.equal('+14155550100');
    expect(parsePhoneNumber('415.555.0100')).to.equal('+14155550100');
    expect(parsePhoneNumber('2025550123')).to.equal('+12025550123');
    expect(parsePhoneNumber('14155550100')).to.equal('+14155550100');
  });

  it('refuses what is not a valid number', () => {
    for (const bad of [
      '',
      '   ',
      'not-a-phone',
      '415-CALL-NOW',
      '12345',
      '+1234',
      '+1415555010', // one digit short
      '+141555501000', // one digit too many
      '415555010', // 9 digits, no country
      '+15555550100', // no such US area code
      '+999123456789', // no such country code
      '+1' + '4'.repeat(40),
      '0014155550100', // an international prefix is not E.164
    ]) {
      expect(parsePhoneNumber(bad), JSON.stringify(bad)).to.equal(null);
    }
  });
});
