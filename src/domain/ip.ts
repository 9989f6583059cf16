import { isIP } from 'node:net';

/**
 * Canonical text of an IP address, so allowlist entries and client addresses compare exactly:
 * IPv6 compressed and lower-cased, IPv4-mapped IPv6 (`::ffff:1.2.3.4`) as plain IPv4.
 * Returns null for anything that is not a single address (CIDR ranges included).
 */
export function normaliseIp(input: string): string | null {
  let ip = input.trim();
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  const kind = isIP(ip);
  if (kind === 4) return ip.split('.').map((o) => String(Number(o))).join('.');
  if (kind !== 6) return null;
  const compressed = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped) {
    const hi = parseInt(mapped[1], 16);
    const lo = parseInt(mapped[2], 16);
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return compressed;
}

/**
 * The client IP: the first hop of X-Forwarded-For, else the socket's address. The header is the
 * caller's own claim: pass it only when a trusted proxy wrote it (see http/client-ip.ts).
 */
export function clientIp(forwardedFor: string | string[] | undefined, socketAddress: string | undefined): string | null {
  const header = Array.isArray(forwardedFor) ? forwardedFor[0] : forwardedFor;
  const first = header?.split(',')[0]?.trim();
  return normaliseIp(first || socketAddress || '');
}
