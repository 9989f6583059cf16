import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook must never reach unless private targets are allowed (SSRF guard): anything that
 * is not a public unicast address. IPv6 forms that carry an IPv4 address (mapped, SIIT, NAT64, 6to4)
 * are judged by that IPv4 address, so `::ffff:127.0.0.1`, `::ffff:7f00:1` and `64:ff9b::a00:1` are
 * loopback and private like the addresses they stand for.
 */
const forbiddenV4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
] as const) {
  forbiddenV4.addSubnet(network, prefix, 'ipv4');
}

const forbiddenV6 = new BlockList();
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback, deprecated IPv4-compatible
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const) {
  forbiddenV6.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address (zone and brackets already removed). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[2].split('.').map(Number);
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => parseInt(group, 16));
}

const ipv4Of = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/** The IPv4 address an IPv6 address stands for (mapped, SIIT, NAT64 well-known prefix, 6to4), if any. */
function embeddedIpv4(g: number[]): string | null {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return ipv4Of(g[6], g[7]); // ::ffff:a.b.c.d
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Of(g[6], g[7]); // ::ffff:0:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return ipv4Of(g[6], g[7]); // 64:ff9b::a.b.c.d
  if (g[0] === 0x2002) return ipv4Of(g[1], g[2]); // 2002:aabb:ccdd::
  return null;
}

/** True for any address a webhook may not target by default; also true for anything that is not an IP address. */
export function isForbiddenAddress(ip: string): boolean {
  let address = ip.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  if (zone >= 0) address = address.slice(0, zone);
  const kind = isIP(address);
  if (kind === 4) return forbiddenV4.check(address, 'ipv4');
  if (kind !== 6) return true;
  const embedded = embeddedIpv4(ipv6Groups(address));
  if (embedded) return forbiddenV4.check(embedded, 'ipv4');
  return forbiddenV6.check(address, 'ipv6');
}
