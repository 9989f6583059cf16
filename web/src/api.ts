import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { navigate } from './router';

const CSRF_COOKIE = 'cl_csrf';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

function cookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

/** Why the session ended, when the server said (a password change), for the login page to say once. */
export const SESSION_ENDED_KEY = 'cl_session_ended';

/**
 * The session lives in an HttpOnly cookie the browser sends by itself; state-changing requests echo
 * the CSRF cookie in a header. An expired session sends the person to /login, and back afterwards.
 */
const session: Middleware = {
  onRequest({ request }) {
    if (!SAFE.has(request.method)) request.headers.set('X-CSRF-Token', cookie(CSRF_COOKIE) ?? '');
    return request;
  },
  async onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/api/auth/session')) {
      const reason = await response
        .clone()
        .json()
        .then((body: { message?: unknown }) => body?.message, () => undefined);
      if (typeof reason === 'string' && reason.startsWith('this session ended')) sessionStorage.setItem(SESSION_ENDED_KEY, reason);
      // A page loading several things gets a 401 for each: the first one sends the person to sign in,
      // the others must not send the sign-in page to itself (the page they came for would be lost).
      if (location.pathname !== '/login') navigate(`/login?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(session);

/** The API's own words for a failed request (its `{message}`), or what went wrong on the way. */
export function errorText(error: unknown, response?: Response): string {
  const message = (error as { message?: unknown } | undefined)?.message;
  if (Array.isArray(message)) return message.join('; ');
  if (typeof message === 'string' && message) return message;
  return response ? `The server answered ${response.status} ${response.statusText}` : 'The request failed';
}

/** Answers the data of a successful call; throws the API's message otherwise. */
export async function call<T>(request: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  let result;
  try {
    result = await request;
  } catch (err) {
    throw new Error(`The server could not be reached (${(err as Error).message})`);
  }
  if (result.error !== undefined || !result.response.ok) throw new Error(errorText(result.error, result.response));
  return result.data as T;
}
