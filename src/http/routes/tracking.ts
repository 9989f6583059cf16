import { z } from 'zod';
import type { EngagementCommands } from '../../commands/engagement.js';
import { verifyTrackedLink } from '../../domain/email/link-signature.js';
import { MAX_TRACKED_TARGET, redirectTarget } from '../../domain/email/tracking.js';
import { readUnsubscribeToken } from '../../domain/email/unsubscribe-token.js';
import { notFound } from '../../domain/errors.js';
import { requestClientIp } from '../client-ip.js';
import { RECIPIENT_PAGE_CSP } from '../content-security.js';
import { defineRoute } from '../route.js';
import type { Request, Response } from 'express';

// The smallest transparent GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const messageParams = z.object({ messageId: z.string().min(1).max(64) });

const visit = (req: Request) => ({
  method: req.method,
  userAgent: req.get('user-agent'),
  ip: requestClientIp(req),
});

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page for a recipient's browser, kept from any cache and allowed nothing but its own form. */
function sendPage(res: Response, status: number, title: string, body: string): void {
  res
    .status(status)
    .type('html')
    .set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': RECIPIENT_PAGE_CSP })
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title></head>` +
        `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">${body}</body></html>`,
    );
}

/**
 * A person who follows a broken or stale unsubscribe link in a browser gets a page saying so instead of
 * JSON; API clients (no preference for HTML) keep the JSON error. Nothing of the request is echoed.
 */
function answeredUnknownLinkPage(req: Request, res: Response): boolean {
  if (req.accepts(['json', 'html']) !== 'html') return false;
  sendPage(
    res,
    404,
    'Unsubscribe link not valid',
    '<h1>This unsubscribe link is not valid</h1><p>It may be incomplete (copied in part) or it belongs to a message that no longer exists, so nothing was changed.</p>' +
      '<p>To stop these emails, use the unsubscribe link of the most recent one you received.</p>',
  );
  return true;
}

/** RFC 8058 one-click bodies arrive urlencoded or as multipart/form-data. */
function isOneClick(body: string): boolean {
  if (new URLSearchParams(body.trim()).get('List-Unsubscribe') === 'One-Click') return true;
  return /name="List-Unsubscribe"\r?\n(?:[^\r\n]+\r?\n)*\r?\nOne-Click/.test(body);
}

/** The service's own links in sent email: open pixel, signed click redirect, unsubscribe. */
export function createTrackingRoutes(deps: { engagement: EngagementCommands; linkSecret: string; logger?: { warn(o: object, m: string): void } }) {
  const remember = (p: Promise<unknown>) => p.catch((err) => deps.logger?.warn({ err }, 'could not record engagement'));

  const pixel = (method: 'get' | 'head') =>
    defineRoute({
      method,
      path: '/o/:messageId',
      summary: 'Open-tracking pixel (1×1 GIF); an open counts when the pixel is signed for the message',
      tag: 'tracking',
      auth: { kind: 'public' },
      params: messageParams,
      query: z.object({ s: z.string().max(200).optional() }),
      responses: { 200: method === 'head' ? { description: 'image/gif' } : { description: 'A 1×1 transparent GIF', schema: z.string().meta({ format: 'binary' }), contentType: 'image/gif' } },
      async handler({ params, query, req, res }) {
        await remember(deps.engagement.recordOpen(params.messageId, visit(req), query.s));
        res.set({ 'Content-Type': 'image/gif', 'Cache-Control': 'no-store, no-cache, must-revalidate, private', Pragma: 'no-cache' });
        res.status(200).end(method === 'head' ? undefined : PIXEL);
        return undefined;
      },
    });

  const redirect = (method: 'get' | 'head') =>
    defineRoute({
      method,
      path: '/r/:messageId',
      summary: 'Click-tracking redirect to a target signed for this message',
      tag: 'tracking',
      auth: { kind: 'public' },
      params: messageParams,
      query: z.object({ u: z.string().max(MAX_TRACKED_TARGET).optional(), s: z.string().max(200).optional() }),
      responses: {
        302: { description: "Redirect to the original link, as its URL serialisation (percent-encoded UTF-8, hosts in punycode)" },
        404: { description: 'Unsigned or tampered link, or a target that is no http(s) URL a redirect can name' },
      },
      async handler({ params, query, req }) {
        const target = query.u ?? '';
        // checked before the click is recorded: a click on a link that goes nowhere is no click
        const location = redirectTarget(target);
        if (!query.s || !verifyTrackedLink(deps.linkSecret, params.messageId, target, query.s) || !location) {
          throw notFound('Not Found');
        }
        await remember(deps.engagement.recordClick(params.messageId, visit(req), target));
        return { status: 302, headers: { Location: location, 'Cache-Control': 'no-store' } };
      },
    });

  // No length limit here: an overlong token is just another unknown one (404, or the page), not a 400.
  const tokenParams = z.object({ token: z.string().min(1) });
  const messageOf = (token: string) => (token.length <= 200 ? readUnsubscribeToken(deps.linkSecret, token) : null);

  return [
    // HEAD first: express would otherwise answer HEAD with the GET route.
    pixel('head'),
    pixel('get'),
    redirect('head'),
    redirect('get'),
    defineRoute({
      method: 'get',
      path: '/u/:token',
      summary: 'Unsubscribe confirmation page (a GET never unsubscribes: scanners prefetch links)',
      tag: 'tracking',
      auth: { kind: 'public' },
      params: tokenParams,
      responses: { 200: { description: 'The confirmation form', schema: z.string(), contentType: 'text/html' }, 404: { description: 'Unknown token: an HTML page for a browser (Accept: text/html), the JSON error otherwise' } },
      async handler({ params, req, res }) {
        const messageId = messageOf(params.token);
        const target = messageId ? await deps.engagement.unsubscribeTarget(messageId) : null;
        if (!target) {
          if (answeredUnknownLinkPage(req, res)) return undefined;
          throw notFound('Not Found');
        }
        sendPage(
          res,
          200,
          'Unsubscribe',
          `<h1>Unsubscribe</h1><p>Stop emails to ${target.to === null ? 'this address' : `<strong>${escapeHtml(target.to)}</strong>`}?</p>` +
            `<form method="post"><input type="hidden" name="confirm" value="yes"><button type="submit">Unsubscribe</button></form>`,
        );
        return undefined;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/u/:token',
      summary: 'RFC 8058 one-click unsubscribe (body List-Unsubscribe=One-Click), or the confirmation form',
      tag: 'tracking',
      auth: { kind: 'public' },
      params: tokenParams,
      bodyType: 'text',
      responses: {
        200: {
          description: 'Unsubscribed (repeats are harmless): `{unsubscribed: true}` to a one-click POST; the confirmation form is answered an HTML page',
          schema: z.object({ unsubscribed: z.literal(true) }).meta({ example: { unsubscribed: true } }),
        },
        404: { description: 'Unknown token' },
      },
      async handler({ params, req, res }) {
        const messageId = messageOf(params.token);
        const body = typeof req.body === 'string' ? req.body : '';
        const oneClick = isOneClick(body);
        const result = messageId ? await deps.engagement.unsubscribe(messageId, oneClick ? 'one_click' : 'form') : null;
        if (!result) {
          if (!oneClick && answeredUnknownLinkPage(req, res)) return undefined;
          throw notFound('Not Found');
        }
        if (oneClick) return { status: 200, body: { unsubscribed: true } };
        const onward = result.unsubscribeUrl
          ? `<p><a href="${escapeHtml(result.unsubscribeUrl)}">Continue</a></p>`
          : '';
        sendPage(res, 200, 'Unsubscribed', `<h1>You are unsubscribed</h1><p>${result.to === null ? 'This address' : escapeHtml(result.to)} will receive no more email from this sender.</p>${onward}`);
        return undefined;
      },
    }),
  ];
}
