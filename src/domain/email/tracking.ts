import { Tokenizer, QuoteType } from 'htmlparser2';
import { badRequest } from '../errors.js';
import { signOpenPixel, signTrackedLink } from './link-signature.js';
import { MAX_BODY } from './render.js';

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

export const pixelUrl = (baseUrl: string, messageId: string, secret: string) => `${baseUrl}/o/${messageId}?s=${signOpenPixel(secret, messageId)}`;

/**
 * The most links one message has tracked. A newsletter has tens of links, a long digest a few hundred;
 * without a bound, 188,000 one-line links (4.9 MB) cost seconds of signing at acceptance and went out
 * as 25 MB of html. Past it the send is refused, not tracked in part: click counts that silently miss
 * links would be wrong, and `data-no-track` (or tracking off) says which links need none.
 */
export const MAX_TRACKED_LINKS = 1000;

/** The longest target `/r/` takes (its `u`), so the longest link the rewrite wraps. */
export const MAX_TRACKED_TARGET = 4000;

/**
 * Where `/r/` sends a click on `target`: the link's WHATWG serialisation (paths, queries and fragments
 * percent-encoded as UTF-8, hosts in punycode), which is ASCII and so a valid `Location`; the raw text
 * was refused by Node beyond Latin-1 and sent as raw bytes within it. Null for a target that is no
 * http(s) URL, or that holds a control character: the URL parser would silently drop CR, LF and tab
 * (a different link from the one written), and no real link carries one. The rewrite wraps only the
 * links this accepts, so every wrapped link redirects.
 */
export const redirectTarget = (target: string): string | null => redirectUrl(target)?.href ?? null;

/** redirectTarget, parsed: the rewrite also asks its origin. */
function redirectUrl(target: string): URL | null {
  if (target.length > MAX_TRACKED_TARGET || !/^https?:\/\//i.test(target) || /\p{Cc}/u.test(target)) return null;
  try {
    const url = new URL(target);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

function shouldTrack(href: string, opts: TrackingOptions, ownOrigin: string | null): boolean {
  if (/\{\{|\}\}|%7B%7B/i.test(href)) return false; // an unrendered placeholder
  if (opts.unsubscribeUrls.includes(href)) return false;
  // none for mailto:, tel:, #anchors, relative links, and what /r/ could not redirect to
  const url = redirectUrl(href);
  return url !== null && url.origin !== ownOrigin; // not already ours
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** One attribute of the tag being read: where it stands in the source, and its decoded value. */
interface Attribute {
  name: string;
  /** from the first character of the name to just after the value (or the name, for a bare one) */
  start: number;
  end: number;
  value: string;
}

/** A change to the source: `[start, end)` becomes `text`. Edits come in source order and never overlap. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Service-side tracking: every http(s) `<a href>` goes through the signed `/r/` redirect
 * and a 1×1 pixel is added before `</body>` (at the end of a fragment). Left alone: mailto:, tel:,
 * anchors, relative links, links already on our host, the unsubscribe links, links `/r/` could not
 * redirect to (see redirectTarget), and links marked `data-no-track` (the marker is removed).
 *
 * The markup is read with htmlparser2's tokenizer (the parser linkedom builds its DOM with) and only
 * those attributes are rewritten in place; every other byte of the message stays as the caller wrote
 * it (Outlook's conditional comments, attribute quoting, entities), which a parse into a DOM and back
 * does not promise. It also costs a fraction of a DOM: linkedom keeps a Map per node in a module-wide
 * WeakMap that only a full garbage collection frees (see docs/architecture.md, "Tracking rewrites attributes in place").
 *
 * Refused (400 on `html`): more than MAX_TRACKED_LINKS links to track, or a result over MAX_BODY.
 */
export function rewriteForTracking(html: string, opts: TrackingOptions): string {
  let ownOrigin: string | null = null;
  try {
    ownOrigin = new URL(opts.baseUrl).origin;
  } catch {
    // a base URL that does not parse owns no links
  }
  const edits: Edit[] = [];
  const src = escapeAttribute(pixelUrl(opts.baseUrl, opts.messageId, opts.secret));
  const pixel = `<img src="${src}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;">`;
  const tooLong = () => badRequest(`html: longer than ${MAX_BODY.toLocaleString('en-US')} characters once its links are tracked`);
  /** what the html will measure: as written, with the pixel and the edits so far */
  let length = html.length + pixel.length;
  if (length > MAX_BODY) throw tooLong();
  let tracked = 0;
  let pixelAt = -1;
  let tag = '';
  let attributes: Attribute[] = [];
  let attribute: Attribute | undefined;

  function endOfOpenTag(): void {
    if (tag !== 'a') return;
    const named = (name: string) => attributes.find((a) => a.name.toLowerCase() === name);
    const noTrack = named('data-no-track');
    if (noTrack) {
      // the marker with the whitespace that separates it from what comes before
      let start = noTrack.start;
      while (start > 0 && /\s/.test(html[start - 1])) start--;
      edits.push({ start, end: noTrack.end, text: '' });
      return;
    }
    const href = named('href');
    const target = href?.value.trim();
    if (href && target && shouldTrack(target, opts, ownOrigin)) {
      // both limits are checked as the links come, so a message past either costs no more than the limit
      if (++tracked > MAX_TRACKED_LINKS) {
        throw badRequest(`html: at most ${MAX_TRACKED_LINKS.toLocaleString('en-US')} links are tracked per message (mark the others data-no-track)`);
      }
      const text = `${href.name}="${escapeAttribute(trackedLink(opts, target))}"`;
      length += text.length - (href.end - href.start);
      if (length > MAX_BODY) throw tooLong();
      edits.push({ start: href.start, end: href.end, text });
    }
  }

  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      onopentagname(start, end) {
        tag = html.slice(start, end).toLowerCase();
        attributes = [];
      },
      onattribname(start, end) {
        attribute = { name: html.slice(start, end), start, end, value: '' };
      },
      onattribdata(start, end) {
        if (attribute) attribute.value += html.slice(start, end);
      },
      onattribentity(codepoint) {
        if (attribute) attribute.value += String.fromCodePoint(codepoint);
      },
      onattribend(_quote: QuoteType, end) {
        if (!attribute) return;
        attribute.end = end;
        attributes.push(attribute);
        attribute = undefined;
      },
      onopentagend: endOfOpenTag,
      onselfclosingtag: endOfOpenTag,
      onclosetag(start, end) {
        // `</` stands just before the name
        if (pixelAt < 0 && html.slice(start, end).toLowerCase() === 'body') pixelAt = start - 2;
      },
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onprocessinginstruction() {},
      ontext() {},
      ontextentity() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();

  if (pixelAt < 0) pixelAt = html.length;
  edits.push({ start: pixelAt, end: pixelAt, text: pixel });

  let out = '';
  let from = 0;
  for (const edit of edits.sort((a, b) => a.start - b.start)) {
    out += html.slice(from, edit.start) + edit.text;
    from = edit.end;
  }
  return out + html.slice(from);
}
