import { z } from 'zod';
import type { AccountCommands } from '../../commands/accounts.js';
import type { SignInThrottle } from '../../commands/sign-in-throttle.js';
import { MIN_PASSWORD_LENGTH } from '../../domain/accounts/password-policy.js';
import { forbidden } from '../../domain/errors.js';
import { requestClientIp } from '../client-ip.js';
import { defineRoute } from '../route.js';
import { checkSameOrigin, clearSession, presentedSession, readCookie, SESSION_COOKIE, setSession } from '../session.js';
import { callerOf, originOf } from './principal-helpers.js';

// Login emails need not have a TLD (the first-boot owner is admin@localhost).
const loginEmail = z.string().trim().max(320).regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address');
const credentials = z.object({ email: loginEmail, password: z.string().min(1).max(1024) }).strict();
const newPassword = z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(1024);
const signupBody = z
  .object({
    accountName: z.string().trim().min(1).max(200),
    email: loginEmail,
    password: newPassword,
  })
  .strict();
const passwordChange = z
  .object({ currentPassword: z.string().min(1).max(1024), newPassword })
  .strict()
  .meta({ examples: [{ currentPassword: 'the-one-printed-at-first-boot', newPassword: 'correct horse battery staple' }] });

export function createAuthRoutes(deps: { accounts: AccountCommands; signIns: SignInThrottle; allowSignup: boolean; secureCookies?: boolean; publicOrigin?: () => string }) {
  const secure = deps.secureCookies ?? false;
  return [
    defineRoute({
      method: 'post',
      path: '/api/auth/session',
      summary: 'Dashboard sign-in: sets the HttpOnly session cookie and the CSRF cookie the pages echo in X-CSRF-Token',
      tag: 'auth',
      auth: { kind: 'public' },
      body: credentials,
      responses: {
        200: { description: 'Signed in; the cookies are set', schema: z.object({ expiresAt: z.string() }).meta({ examples: [{ expiresAt: '2026-01-01T12:00:00.000Z' }] }) },
        401: { description: 'Wrong credentials' },
        403: { description: 'Posted from a page of another origin' },
        429: { description: 'Too many failed attempts; Retry-After says when to retry' },
      },
      async handler({ body, req, res }) {
        checkSameOrigin(req, deps.publicOrigin?.() ?? '');
        const { token, expiresAt } = await deps.signIns.attempt(body.email, requestClientIp(req), () =>
          deps.accounts.login(body.email, body.password, originOf(req)),
        );
        setSession(res, token, expiresAt, secure);
        return { status: 200, body: { expiresAt } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/auth/session',
      summary: 'Who the session (or JWT) belongs to; 401 once it has expired',
      tag: 'auth',
      auth: { kind: 'jwt' },
      responses: {
        200: { description: 'The signed-in user', schema: z.object({ userId: z.string(), accountId: z.string() }).meta({ examples: [{ userId: 'usr_1', accountId: 'acc_1' }] }) },
        401: { description: 'Not signed in, or the session expired' },
      },
      handler({ principal }) {
        const user = principal as { userId: string; accountId: string };
        return { status: 200, body: { userId: user.userId, accountId: user.accountId } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/auth/session',
      summary: 'Sign out: the session (the cookie, or the bearer token) is refused from now on, everywhere; clears the session cookies',
      tag: 'auth',
      auth: { kind: 'public' },
      responses: { 204: { description: 'Signed out' } },
      async handler({ req, res }) {
        const session = presentedSession(req);
        if (session) await deps.accounts.signOut(session.token, originOf(req));
        clearSession(res, secure);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/password',
      summary:
        "Change the signed-in user's password. Every session and token issued before it stops working; the caller gets a new one (the dashboard's cookie, or `token` for a caller that sent a bearer token)",
      tag: 'auth',
      auth: { kind: 'jwt' },
      body: passwordChange,
      responses: {
        200: {
          description: 'Changed: the new session',
          schema: z.object({ expiresAt: z.string(), token: z.string().optional() }).meta({ examples: [{ expiresAt: '2026-01-01T12:00:00.000Z' }] }),
        },
        400: { description: 'newPassword shorter than 8 characters' },
        403: { description: 'currentPassword is not the current password (counts as a failed sign-in)' },
        409: { description: 'Another change replaced the password meanwhile' },
        429: { description: 'Too many failed password attempts; Retry-After says when to retry' },
      },
      async handler({ principal, body, req, res }) {
        const { userId } = principal as { userId: string };
        const email = await deps.accounts.loginEmail(userId);
        const session = await deps.signIns.attempt(email, requestClientIp(req), () =>
          deps.accounts.changePassword(userId, callerOf(principal, req), body.currentPassword, body.newPassword),
        );
        // A bearer caller gets its token in the body; the dashboard's stays where page scripts cannot read it.
        if (!req.get('authorization') && readCookie(req, SESSION_COOKIE)) {
          setSession(res, session.token, session.expiresAt, secure);
          return { status: 200, body: { expiresAt: session.expiresAt } };
        }
        return { status: 200, body: session };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/login',
      summary: 'Dashboard login: exchange email and password for a JWT',
      tag: 'auth',
      auth: { kind: 'public' },
      body: credentials,
      responses: {
        200: { description: 'A token', schema: z.object({ token: z.string(), expiresAt: z.string() }) },
        401: { description: 'Wrong credentials' },
        429: { description: 'Too many failed attempts for this account or from this address; Retry-After says when to retry' },
      },
      async handler({ body, req }) {
        const token = await deps.signIns.attempt(body.email, requestClientIp(req), () =>
          deps.accounts.login(body.email, body.password, originOf(req)),
        );
        return { status: 200, body: token };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/signup',
      summary: 'Create an account and its owner (when ALLOW_SIGNUP is true)',
      tag: 'auth',
      auth: { kind: 'public' },
      body: signupBody,
      responses: {
        201: { description: 'The new account and a token for its owner', schema: z.object({ accountId: z.string(), token: z.string() }) },
        403: { description: 'Signup is disabled' },
        409: { description: 'The email is taken' },
      },
      // A closed server says so whatever the body: nothing of it is read.
      beforeBody() {
        if (!deps.allowSignup) throw forbidden('signup is disabled on this server');
      },
      async handler({ body, req }) {
        return { status: 201, body: await deps.accounts.signup(body, originOf(req)) };
      },
    }),
  ];
}
