import { expect } from 'chai';
import { emailAddress, isEmailAddress } from '../../../src/domain/email/address.js';

const local = (n: number) => 'x'.repeat(n);
const label = (n: number) => 'd'.repeat(n);

describe('domain/email/address: the one address validator (RFC 5321 limits, RFC 5322 dot-atom)', () => {
  it('takes every atext character in a dot-atom local part', () => {
    for (const ok of ['a=b@example.org', 'a/b@example.org', 'a~b@example.org', 'a#b@example.org', 'a&b@example.org', 'a{b}@example.org', "o'neil@example.org", 'a+tag@example.org', 'a.b.c@example.org', "!#$%&'*+/=?^_`{|}~-@example.org", 'ada@mail.xn--p1ai']) {
      expect(isEmailAddress(ok), ok).to.equal(true);
      expect(emailAddress().safeParse(ok).success, ok).to.equal(true);
    }
  });

  it('takes the limits themselves: a local part of 64, a label of 63, 254 in all', () => {
    expect(isEmailAddress(`${local(64)}@example.org`)).to.equal(true);
    expect(isEmailAddress(`a@${label(63)}.org`)).to.equal(true);
    const at254 = `${local(64)}@${label(63)}.${label(63)}.${label(57)}.org`;
    expect(at254).to.have.length(254);
    expect(isEmailAddress(at254)).to.equal(true);
  });

  it('refuses what a provider would refuse after a 201: past each limit', () => {
    for (const bad of [`${local(65)}@example.org`, `${local(100)}@example.org`, `${local(200)}@example.org`, `a@${label(64)}.org`, `${local(64)}@${label(63)}.${label(63)}.${label(58)}.org`, `a@${(label(60) + '.').repeat(5)}org`]) {
      expect(isEmailAddress(bad), `${bad.length}: ${bad.slice(0, 30)}`).to.equal(false);
      expect(emailAddress().safeParse(bad).error?.issues[0].message).to.equal('Invalid email address');
    }
  });

  it('refuses what is not a dot-atom at a host name with a TLD (quoted local parts and IP literals included)', () => {
    for (const bad of ['', 'ada', 'ada@', '@example.org', 'a..b@example.org', '.a@example.org', 'a.@example.org', 'a b@example.org', '"a b"@example.org', 'a@[192.0.2.1]', 'a@localhost', 'a@example', 'a@example.1', 'a@-x.org', 'a@x-.org', 'a@x..org', 'a@x.org.', 'a(b)@example.org', 'a,b@example.org', 'a@b@example.org', 'ädä@example.org', 'ada@exämple.org', 'Ada <ada@example.org>']) {
      expect(isEmailAddress(bad), bad).to.equal(false);
    }
  });
});
