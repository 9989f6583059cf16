import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { badRequest } from '../../domain/errors.js';
import { normaliseIp } from '../../domain/ip.js';

/** Addresses a webhook may never reach unless private targets are allowed (SSRF guard). */
const forbidden = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  forbidden.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  forbidden.addSubnet(net, bits, 'ipv6');
}

export function isForbiddenAddress(ip: string): boolean {
  // IPv4-mapped and compressed forms are reduced to one canonical form first (`::ffff:127.0.0.1` is loopback).
  const normal = normaliseIp(ip);
  if (!normal) return true;
  return forbidden.check(normal, isIP(normal) === 6 ? 'ipv6' : 'ipv4');
}

export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;
const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** Resolves a URL's host; refuses it when any address is private (unless allowed). Returns the addresses. */
export async function resolveAllowedTarget(
  url: string,
  options: { allowPrivateTargets: boolean; lookup?: Lookup },
): Promise<{ address: string; family: number }[]> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`${url} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest('webhook URLs must be http or https');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await (options.lookup ?? systemLookup)(host).catch(() => []);
  if (addresses.length === 0) throw badRequest(`${parsed.hostname} does not resolve`);
  if (!options.allowPrivateTargets && addresses.some((a) => isForbiddenAddress(a.address))) {
    throw badRequest(`${parsed.hostname} resolves to a private, loopback or link-local address; webhooks may not target it`);
  }
  return addresses;
}

export async function assertAllowedTarget(url: string, options: { allowPrivateTargets: boolean; lookup?: Lookup }): Promise<void> {
  await resolveAllowedTarget(url, options);
}
