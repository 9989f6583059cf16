import { expect } from 'chai';
import { clientIp, normaliseIp } from '../../src/domain/ip.js';

describe('normaliseIp', () => {
  it('keeps IPv4 and drops leading zeros', () => {
    expect(normaliseIp('203.0.113.5')).to.equal('203.0.113.5');
    expect(normaliseIp(' 10.0.0.1 ')).to.equal('10.0.0.1');
  });
  it('compresses and lower-cases IPv6', () => {
    expect(normaliseIp('2001:DB8:0:0:0:0:0:1')).to.equal('2001:db8::1');
    expect(normaliseIp('[::1]')).to.equal('::1');
    expect(normaliseIp('fe80::1%eth0')).to.equal('fe80::1');
  });
  it('turns IPv4-mapped IPv6 into IPv4', () => {
    expect(normaliseIp('::ffff:1.2.3.4')).to.equal('1.2.3.4');
    expect(normaliseIp('::FFFF:7f00:1')).to.equal('127.0.0.1');
  });
  it('refuses CIDR ranges and garbage', () => {
    for (const bad of ['10.0.0.0/8', '2001:db8::/32', 'localhost', '', '1.2.3', '999.1.1.1']) {
      expect(normaliseIp(bad), bad).to.equal(null);
    }
  });
});

describe('clientIp', () => {
  it('takes the first hop of X-Forwarded-For', () => {
    expect(clientIp('198.51.100.7, 10.0.0.1', '127.0.0.1')).to.equal('198.51.100.7');
    expect(clientIp(['2001:db8::5, 10.0.0.1'], '127.0.0.1')).to.equal('2001:db8::5');
  });
  it('falls back to the socket address, normalised', () => {
    expect(clientIp(undefined, '::ffff:127.0.0.1')).to.equal('127.0.0.1');
    expect(clientIp('', '::1')).to.equal('::1');
  });
});
