import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { badRequest } from '../../domain/errors.js';
import { isForbiddenAddress } from './forbidden-addresses.js';

export { isForbiddenAddress } from './forbidden-addresses.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}
export type Lookup = (host: string) => Promise<ResolvedAddress[]>;

const DEFAULT_LOOKUP_TIMEOUT_MS = 5_000;
const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** A webhook URL as the service accepts it: absolute, http or https. Throws AppError 400 otherwise. */
export function parseWebhookUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`${url} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest('webhook URLs must be http or https');
  if (!parsed.hostname) throw badRequest(`${url} has no host`);
  return parsed;
}

/** `[::1]` as `::1`: URL keeps the brackets of an IPv6 literal, lookups and checks need the bare address. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

async function resolveHost(host: string, lookup: Lookup, timeoutMs: number): Promise<ResolvedAddress[]> {
  const family = isIP(host);
  if (family) return [{ address: host, family }];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no DNS answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([lookup(host), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves the URL's host once and returns its addresses, refusing (AppError 400) when it does not
 * resolve, or, unless `allowPrivateTargets`, when ANY address is forbidden: a name that also resolves
 * to a private address is a way in, whichever address the connection would have used.
 */
export async function resolveAllowedTarget(
  url: string,
  options: { allowPrivateTargets: boolean; lookup?: Lookup; lookupTimeoutMs?: number },
): Promise<ResolvedAddress[]> {
  const parsed = parseWebhookUrl(url);
  const host = bareHost(parsed);
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveHost(host, options.lookup ?? systemLookup, options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS);
  } catch (err) {
    throw badRequest(`${parsed.hostname} does not resolve: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (addresses.length === 0) throw badRequest(`${parsed.hostname} does not resolve`);
  if (!options.allowPrivateTargets) {
    const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
    if (forbidden) {
      throw badRequest(`${parsed.hostname} resolves to ${forbidden.address}, a private, loopback, link-local or reserved address; webhooks may not target it (WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows private targets)`);
    }
  }
  return addresses;
}

/**
 * The check when a webhook is created or its URL changed: http(s) only and, unless private targets are
 * allowed, a host resolving to public addresses only. With private targets allowed nothing is resolved
 * (the name may only exist later, or only inside the deployment). Delivery checks again at send time.
 */
export async function assertAllowedTarget(
  url: string,
  options: { allowPrivateTargets: boolean; lookup?: Lookup; lookupTimeoutMs?: number },
): Promise<void> {
  parseWebhookUrl(url);
  if (options.allowPrivateTargets) return;
  await resolveAllowedTarget(url, options);
}
