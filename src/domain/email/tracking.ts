import { parseHTML } from 'linkedom';
import { signTrackedLink } from './link-signature.js';

export interface TrackingOptions {
  baseUrl: string;
  messageId: string;
  secret: string;
  /** links that must stay as they are (the unsubscribe links) */
  unsubscribeUrls: string[];
}

/** `{baseUrl}/r/{messageId}?u=<target>&s=<signature>` */
export function trackedLink(opts: Pick<TrackingOptions, 'baseUrl' | 'messageId' | 'secret'>, target: string): string {
  const params = new URLSearchParams({ u: target, s: signTrackedLink(opts.secret, opts.messageId, target) });
  return `${opts.baseUrl}/r/${opts.messageId}?${params}`;
}

export const pixelUrl = (baseUrl: string, messageId: string) => `${baseUrl}/o/${messageId}`;

function shouldTrack(href: string, opts: TrackingOptions): boolean {
  const trimmed = href.trim();
  if (!/^https?:\/\//i.test(trimmed)) return false; // mailto:, tel:, #anchors, relative links
  if (/\{\{|\}\}|%7B%7B/i.test(trimmed)) return false; // an unrendered placeholder
  if (opts.unsubscribeUrls.includes(trimmed)) return false;
  try {
    if (new URL(trimmed).origin === new URL(opts.baseUrl).origin) return false; // already ours
  } catch {
    return false;
  }
  return true;
}

/**
 * Service-side tracking (SPEC.md §1): every http(s) `<a href>` goes through the signed `/r/` redirect
 * and a 1×1 pixel is added before `</body>`. Left alone: mailto:, tel:, anchors, relative links, links
 * already on our host, the unsubscribe links, and links marked `data-no-track` (the marker is removed).
 */
export function rewriteForTracking(html: string, opts: TrackingOptions): string {
  const isDocument = /<html[\s>]|<body[\s>]/i.test(html);
  const { document } = parseHTML(isDocument ? html : `<!doctype html><html><head></head><body>${html}</body></html>`);
  for (const a of Array.from(document.querySelectorAll('a')) as Element[]) {
    // Attribute names are matched case-insensitively (linkedom keeps `HREF` as written).
    const attrs = Array.from(a.attributes) as Attr[];
    const noTrack = attrs.find((x) => x.name.toLowerCase() === 'data-no-track');
    if (noTrack) {
      a.removeAttribute(noTrack.name);
      continue;
    }
    const hrefAttr = attrs.find((x) => x.name.toLowerCase() === 'href');
    if (hrefAttr && shouldTrack(hrefAttr.value, opts)) a.setAttribute(hrefAttr.name, trackedLink(opts, hrefAttr.value.trim()));
  }
  // Parsed rather than built with setAttribute, which linkedom serialises in reverse order: `src` first reads best.
  const src = pixelUrl(opts.baseUrl, opts.messageId).replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  const body = document.body ?? document.documentElement;
  body.insertAdjacentHTML('beforeend', `<img src="${src}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;">`);
  return isDocument ? document.toString() : body.innerHTML;
}
