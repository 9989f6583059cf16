/**
 * SNS_CERT_URL_PATTERN is the only gate on which URLs we fetch (docs/configuration.md). The pattern must match
 * the URL as received and as the URL parser normalises it (what is actually requested), so a string the
 * regex and the parser read differently is refused. Returns the parsed URL, or null when refused.
 */
export function allowedSnsUrl(pattern: RegExp, value: unknown): URL | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return null;
  // A global or sticky regex keeps state between test() calls; one without those flags does not.
  const stateless = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  if (!stateless.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return stateless.test(url.href) ? url : null;
}
