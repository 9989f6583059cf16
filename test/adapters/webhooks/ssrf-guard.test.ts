import { expect } from 'chai';
import { AppError } from '../../../src/domain/errors.js';
import { assertAllowedTarget, isForbiddenAddress, resolveAllowedTarget, type Lookup } from '../../../src/adapters/webhooks/ssrf-guard.js';

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).status).to.equal(400);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

/** A resolver that answers from a table and records what it was asked (no real DNS in these tests). */
function tableLookup(table: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup: Lookup = async (host) => {
    asked.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { lookup, asked };
}

describe('SSRF guard', () => {
  describe('isForbiddenAddress', () => {
    const forbidden = {
      'IPv4 loopback': ['127.0.0.1', '127.255.255.254'],
      'IPv4 private': ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255'],
      'carrier-grade NAT': ['100.64.0.1', '100.127.255.255'],
      'link-local and cloud metadata': ['169.254.0.1', '169.254.169.254'],
      'this network / unspecified': ['0.0.0.0', '0.1.2.3'],
      'multicast and broadcast': ['224.0.0.1', '239.255.255.250', '255.255.255.255', '240.0.0.1'],
      'documentation, benchmarking and protocol ranges': ['192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '192.0.0.170'],
      'IPv6 loopback and unspecified': ['::1', '::', '0:0:0:0:0:0:0:1', '[::1]'],
      'IPv6 link-local (with or without zone)': ['fe80::1', 'fe80::1%eth0', 'febf::1'],
      'IPv6 unique local': ['fc00::1', 'fd12:3456:789a::1'],
      'IPv6 multicast': ['ff02::1', 'ff05::1:3'],
      'IPv4-mapped IPv6 of forbidden IPv4': ['::ffff:127.0.0.1', '::ffff:7f00:1', '::FFFF:7F00:0001', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '0:0:0:0:0:ffff:c0a8:0101'],
      'IPv4-compatible, SIIT, NAT64 and 6to4 forms of forbidden IPv4': ['::127.0.0.1', '::7f00:1', '::ffff:0:127.0.0.1', '64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::1', '2002:c0a8:101::'],
      'reserved IPv6': ['2001:db8::1', '2001::1', '100::1', '64:ff9b:1::1', 'fec0::1', '3fff::1'],
      'anything that is not an IP address': ['', 'localhost', 'example.com', '127.1', '1.2.3', '::g', '300.1.1.1'],
    };
    for (const [kind, addresses] of Object.entries(forbidden)) {
      it(`forbids ${kind}`, () => {
        for (const address of addresses) expect(isForbiddenAddress(address), address).to.equal(true);
      });
    }

    it('allows public IPv4 addresses, including the neighbours of forbidden ranges', () => {
      for (const address of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '9.255.255.255', '11.0.0.0', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255', '192.167.255.255', '223.255.255.255']) {
        expect(isForbiddenAddress(address), address).to.equal(false);
      }
    });

    it('allows public IPv6 addresses, and IPv6 forms of public IPv4 addresses', () => {
      for (const address of ['2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '2002:808:808::1', 'fbff::1', 'fe7f::1']) {
        expect(isForbiddenAddress(address), address).to.equal(false);
      }
    });
  });

  describe('resolveAllowedTarget and assertAllowedTarget', () => {
    it('accepts an http or https URL resolving to public addresses only, and returns them', async () => {
      const { lookup } = tableLookup({ 'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
      const addresses = await resolveAllowedTarget('https://hooks.example.com/in', { allowPrivateTargets: false, lookup });
      expect(addresses.map((a) => a.address)).to.deep.equal(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
      await assertAllowedTarget('http://hooks.example.com:8080/in', { allowPrivateTargets: false, lookup });
    });

    it('refuses a name when ANY of its addresses is forbidden', async () => {
      const { lookup } = tableLookup({ 'mixed.example.com': ['93.184.215.14', '10.1.2.3'] });
      const err = await refusal(assertAllowedTarget('https://mixed.example.com/', { allowPrivateTargets: false, lookup }));
      expect(err.message).to.include('10.1.2.3');
    });

    it('refuses literal private addresses in every spelling the URL parser accepts', async () => {
      const { lookup, asked } = tableLookup({});
      for (const url of [
        'http://127.0.0.1/',
        'http://2130706433/',
        'http://0x7f.1/',
        'http://[::1]:8080/',
        'http://[::ffff:127.0.0.1]/',
        'http://169.254.169.254/latest/meta-data/',
        'http://[fe80::1]/',
        'http://0/',
      ]) {
        await refusal(assertAllowedTarget(url, { allowPrivateTargets: false, lookup }));
      }
      expect(asked, 'IP literals are not looked up').to.deep.equal([]);
    });

    it('refuses localhost through the resolver', async () => {
      const { lookup } = tableLookup({ localhost: ['127.0.0.1', '::1'] });
      await refusal(assertAllowedTarget('http://localhost:3000/hook', { allowPrivateTargets: false, lookup }));
      // and with the real system resolver (/etc/hosts, no network)
      await refusal(assertAllowedTarget('http://localhost:3000/hook', { allowPrivateTargets: false }));
    });

    it('refuses schemes other than http and https, and invalid URLs, even when private targets are allowed', async () => {
      for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'not a url', '/relative']) {
        await refusal(assertAllowedTarget(url, { allowPrivateTargets: true }));
      }
    });

    it('refuses a name that does not resolve, or resolves too slowly', async () => {
      const { lookup } = tableLookup({});
      expect((await refusal(assertAllowedTarget('https://nowhere.invalid/', { allowPrivateTargets: false, lookup }))).message).to.match(/does not resolve/);
      const slow: Lookup = () => new Promise(() => {});
      const started = Date.now();
      expect((await refusal(assertAllowedTarget('https://slow.example.com/', { allowPrivateTargets: false, lookup: slow, lookupTimeoutMs: 100 }))).message).to.match(/100 ms/);
      expect(Date.now() - started).to.be.below(1000);
    });

    it('lets anything http(s) through at creation time when private targets are allowed, without resolving', async () => {
      const { lookup, asked } = tableLookup({});
      await assertAllowedTarget('http://127.0.0.1:4000/hook', { allowPrivateTargets: true, lookup });
      await assertAllowedTarget('http://receiver.internal/hook', { allowPrivateTargets: true, lookup });
      expect(asked).to.deep.equal([]);
    });
  });
});
