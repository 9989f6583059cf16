import express, { type Request, type Response } from 'express';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PAGE_CSP } from './content-security.js';

/**
 * `/docs`: the browsable API reference, Swagger UI rendering `/openapi.json`. Its files come from the
 * `swagger-ui-dist` package in node_modules, so the page works offline and loads nothing from another
 * origin. Swagger UI's own index.html starts it with an inline script; ours loads a small initializer
 * file instead, so the page runs under a Content-Security-Policy with no inline script.
 */

const distDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files of the package the page needs; nothing else of node_modules is reachable. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Courier Ledger API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"><noscript>This reference needs JavaScript; the same description is at <a href="/openapi.json">/openapi.json</a>.</noscript></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // The page is the reference, not a client: no "Try it out" against a live server by default.
  tryItOutEnabled: false,
  // Nothing is sent to the public validator (it would be a request to another origin).
  validatorUrl: null,
});
`;

function send(res: Response, type: string, body: string | Buffer) {
  res.set({ 'Content-Type': type, 'Content-Security-Policy': PAGE_CSP });
  res.send(body);
}

export function createApiDocs(): express.Router {
  const router = express.Router();
  router.get('/docs', (_req: Request, res: Response) => send(res, 'text/html; charset=utf-8', PAGE));
  router.get('/docs/init.js', (_req: Request, res: Response) => send(res, 'text/javascript; charset=utf-8', INIT));
  router.get('/docs/assets/:file', (req: Request, res: Response, next) => {
    const file = String(req.params.file);
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return next();
    res.set({ 'Content-Security-Policy': PAGE_CSP, 'Cache-Control': 'public, max-age=3600' });
    res.type(type).sendFile(join(distDir, file));
  });
  return router;
}
