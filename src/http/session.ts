import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { forbidden } from '../domain/errors.js';

/** The dashboard's session: the same JWT the API issues, kept where page scripts cannot read it. */
export const SESSION_COOKIE = 'cl_session';
/**
 * Double-submit CSRF token: readable by the dashboard's own scripts (not HttpOnly), which echo it in
 * the `X-CSRF-Token` header. Another site can make the browser send the cookie but cannot read it,
 * and cannot set a custom header on a cross-origin request without a CORS preflight we never allow.
 */
export const CSRF_COOKIE = 'cl_csrf';
export const CSRF_HEADER = 'x-csrf-token';

export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_REFUSAL = 'missing or invalid CSRF token: reload the page and try again';

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The dashboard token a request presents: its bearer token, else its session cookie's (`cookie`: it
 * came that way, so a state-changing request needs the CSRF header too).
 */
export function presentedSession(req: Request): { token: string; cookie: boolean } | undefined {
  const bearer = req.get('authorization')?.match(/^Bearer\s+(.+)$/i)?.[1];
  if (bearer) return { token: bearer, cookie: false };
  const cookie = readCookie(req, SESSION_COOKIE);
  return cookie ? { token: cookie, cookie: true } : undefined;
}

/** A state-changing request authenticated by the cookie must carry the matching CSRF header. */
export function checkCsrf(req: Request): void {
  if (SAFE_METHODS.has(req.method)) return;
  const cookie = readCookie(req, CSRF_COOKIE);
  const header = req.get(CSRF_HEADER);
  if (!cookie || !header || cookie.length !== header.length || !timingSafeEqual(Buffer.from(cookie), Buffer.from(header))) {
    throw forbidden(CSRF_REFUSAL);
  }
}

function cookieAttributes(secure: boolean, expires: Date): string {
  return `Path=/; SameSite=Lax; Expires=${expires.toUTCString()}${secure ? '; Secure' : ''}`;
}

/** Sets the session (HttpOnly) and its CSRF token (readable by the page), both ending with the token. */
export function setSession(res: Response, token: string, expiresAt: string, secure: boolean): void {
  const expires = new Date(expiresAt);
  res.append('Set-Cookie', `${SESSION_COOKIE}=${token}; HttpOnly; ${cookieAttributes(secure, expires)}`);
  res.append('Set-Cookie', `${CSRF_COOKIE}=${randomBytes(24).toString('base64url')}; ${cookieAttributes(secure, expires)}`);
}

export function clearSession(res: Response, secure: boolean): void {
  const past = new Date(0);
  res.append('Set-Cookie', `${SESSION_COOKIE}=; HttpOnly; ${cookieAttributes(secure, past)}`);
  res.append('Set-Cookie', `${CSRF_COOKIE}=; ${cookieAttributes(secure, past)}`);
}

/**
 * Signing in from another site's page (login CSRF: the victim's browser signed into the attacker's
 * account) is refused: browsers name the page's origin on every cross-site POST. The service's own
 * origin is BASE_URL's, or the Host the request came to (a proxy may rewrite one of them).
 */
export function checkSameOrigin(req: Request, publicOrigin: string): void {
  const origin = req.get('origin');
  if (!origin || origin === publicOrigin) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    host = '';
  }
  if (host !== req.get('host')) throw forbidden('sign-in from another site is refused');
}
