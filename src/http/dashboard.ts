import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DASHBOARD_CSP } from './content-security.js';

/** Where `npm run build:web` (run by `npm ci`) writes the dashboard. */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/**
 * The dashboard's pages: each is the same single-page shell, which picks the page by its path. A page
 * added to the dashboard is added here (and to the shell's router and navigation).
 */
const PAGES: RegExp[] = [
  /^\/login$/,
  /^\/messages$/,
  /^\/messages\/[^/]+$/,
  /^\/webhooks$/,
  /^\/domains$/,
  /^\/settings$/,
  /^\/settings\/sms$/,
  /^\/api-keys$/,
  /^\/suppressions$/,
  /^\/contacts$/,
  /^\/templates$/,
  /^\/campaigns$/,
  /^\/sandbox$/,
  /^\/audit$/,
];

function secureHeaders(res: Response) {
  res.set({
    'Content-Security-Policy': DASHBOARD_CSP,
    'Referrer-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
  });
}

/** A request a browser makes to show a page: it names text/html among what it accepts (a bare *\/* does not). */
const isBrowserPage = (req: Request) => /(^|,)\s*text\/html\s*(;|,|$)/i.test(req.get('accept') ?? '');

/** Serves the built dashboard: its hashed assets, and its shell for every page path. */
export function createDashboard(dist = DASHBOARD_DIST): Router {
  const router = express.Router();
  const indexPath = join(dist, 'index.html');
  let shell: string | undefined;
  const readShell = () => (shell ??= existsSync(indexPath) ? readFileSync(indexPath, 'utf8') : undefined);

  router.get('/', (_req, res) => res.redirect(302, '/messages'));
  router.use(
    '/assets',
    (_req: Request, res: Response, next: NextFunction) => {
      secureHeaders(res);
      next();
    },
    // the file names carry their content's hash: a new build has new names
    express.static(join(dist, 'assets'), { index: false, immutable: true, maxAge: '365d', fallthrough: true }),
  );
  // A middleware, not a route: a path that is no page passes on unmatched (a route would leave its
  // own pattern on the request, and the 404 would be counted under it).
  // Any other path a browser asks for as a page (not the API's, its reference's or an asset) is answered 404 with the
  // same shell, which says "No such page" in the dashboard's own words instead of the API's JSON.
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const page = PAGES.some((p) => p.test(req.path));
    if (!page && !(isBrowserPage(req) && !/^\/(api|assets|docs)(\/|$)/.test(req.path))) return next();
    const html = readShell();
    secureHeaders(res);
    res.set('Cache-Control', 'no-cache');
    if (!html) {
      res.status(page ? 503 : 404).type('text/plain').send('The dashboard is not built: run `npm run build:web` (npm ci does it).');
      return;
    }
    res.status(page ? 200 : 404).type('html').send(html);
  });
  return router;
}
