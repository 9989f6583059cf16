import express, { type NextFunction, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { notFound } from '../domain/errors.js';
import { jsonBodyParser } from './json-body.js';
import { findUnstorable, rejectUnstorable, toStorable } from './reject-nul.js';
import { mapError } from './error-mapping.js';
import { buildOpenApi } from './openapi.js';
import { createApiDocs } from './api-docs.js';
import { API_CSP } from './content-security.js';
import { createLoggedUrl, requestLogLevel, requestSerializer } from './request-log.js';
import type { PresentedKey } from '../commands/api-keys.js';
import type { Principal, Scope } from '../domain/principal.js';
import type { RouteAuth } from './principal.js';
import type { AnyRoute } from './route.js';
import { callerScope, idempotencyKeyOf, requestFingerprint, type IdempotencyGate } from './idempotency.js';

export type Authenticate = (req: Request, auth: RouteAuth) => Promise<Principal | undefined>;

export interface AppDeps {
  routes: AnyRoute[];
  authenticate: Authenticate;
  /** the key a request presents, for routes that check it themselves (`inHandler`) */
  presentKey?: (req: Request, scope: Scope) => PresentedKey;
  /** the error a failed request is answered with, given the one it failed with (throttling of key failures) */
  screenError?: (err: unknown, req: Request) => Promise<unknown>;
  logger: Logger;
  baseUrl: string;
  version?: string;
  /** express's `trust proxy` value (TRUST_PROXY): which peers' X-Forwarded-For names the client */
  trustProxy?: boolean | number | string;
  /** runs the requests of routes declared `idempotent` that carry an Idempotency-Key */
  idempotency?: IdempotencyGate;
  /** the browser dashboard, served beside the API (its pages and assets; never under /api) */
  dashboard?: express.Handler;
  /** told of every finished request: its route's pattern (`unmatched` for none), status and duration */
  observeHttp?: (method: string, route: string, status: number, seconds: number) => void;
}

const BODY_LIMIT = '10mb';
const API_HEADERS = { 'Content-Security-Policy': API_CSP, 'X-Content-Type-Options': 'nosniff' };
const jsonBody = jsonBodyParser(BODY_LIMIT);
const textBody = express.text({ limit: BODY_LIMIT, type: () => true });

/** The caller's X-Request-Id when it is a sane token, else a new one; answered on the response. */
function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Compiled here, read by requestClientIp: X-Forwarded-For counts only from a trusted proxy.
  app.set('trust proxy', deps.trustProxy ?? 'loopback');
  app.set('query parser', 'simple');

  // Any response's body is the answer to one request: an ETag (a hash of every body) validates nothing.
  app.set('etag', false);
  // Every answer carries a policy: the pages set their own, the rest may load and run nothing.
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.set(API_HEADERS);
    next();
  });

  // A request logger per request costs pino-http a serialised copy of the request, made whether or not
  // anything is logged; with logging off, only the request id is kept.
  app.use(
    deps.logger.isLevelEnabled('fatal')
      ? pinoHttp({
          logger: deps.logger,
          genReqId: requestId,
          // keep logs free of secrets
          // every credential a request or its answer carries: a session cookie set in an answer is as good as a password for 12 hours
          redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-csrf-token"]', 'res.headers["set-cookie"]'],
          serializers: { req: requestSerializer(createLoggedUrl(deps.routes.map((route) => route.path))) },
          customLogLevel: (req, res, err) => requestLogLevel(((req as Request).originalUrl ?? req.url ?? '').split('?')[0], res.statusCode, err, res.getHeader('retry-after') !== undefined),
        })
      : (req: Request, res: Response, next: NextFunction) => {
          req.id = requestId(req, res);
          next();
        },
  );

  if (deps.observeHttp) {
    const observe = deps.observeHttp;
    app.use((req: Request, res: Response, next: NextFunction) => {
      const started = performance.now();
      // req.route is the matched route's pattern, so the series stay few whatever paths are requested
      res.once('finish', () => observe(req.method, (req.route?.path as string | undefined) ?? 'unmatched', res.statusCode, (performance.now() - started) / 1000));
      next();
    });
  }

  const openapi = buildOpenApi(deps.routes, {
    title: 'Courier Ledger API',
    version: deps.version ?? '0.1.0',
    baseUrl: deps.baseUrl,
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  app.use(createApiDocs());

  for (const route of deps.routes) {
    const auth = route.auth;
    const bodyParser = route.bodyType === 'text' ? textBody : jsonBody;
    // A body that cannot be read (malformed JSON, too large) is answered only once the credentials
    // are known good: a bad key or token is the first thing a caller is told, whatever it sent.
    const parse = (req: Request, res: Response, next: NextFunction) => {
      try {
        route.beforeBody?.(req, res);
      } catch (err) {
        return next(err);
      }
      bodyParser(req, res, (err?: unknown) => {
        if (!err || auth.kind === 'public') return next(err);
        deps.authenticate(req, auth).then(() => next(err), next);
      });
    };
    app[route.method](route.path, parse, async (req: Request, res: Response) => {
      const key = auth.kind === 'apiKey' && auth.inHandler ? deps.presentKey!(req, auth.scope) : undefined;
      const principal = key ? undefined : await deps.authenticate(req, auth);
      let body, query, params, idempotencyKey;
      try {
        idempotencyKey = route.idempotent && deps.idempotency ? idempotencyKeyOf(req) : undefined;
        if (findUnstorable(req.params)) throw notFound('Not Found');
        const raw = route.replaceUnstorable ? toStorable(req.body) : req.body;
        const apart = route.itemsCheckedApart;
        const rest = apart && raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...raw, [apart]: undefined } : raw;
        rejectUnstorable({ 'request body': rest, 'query string': req.query });
        body = route.body ? route.body.parse(raw ?? {}) : raw;
        query = route.query ? route.query.parse(req.query) : req.query;
        params = route.params ? route.params.parse(req.params) : req.params;
      } catch (err) {
        // a request the handler will not see has its key checked here: a bad key is answered first
        if (key) await deps.authenticate(req, auth);
        throw err;
      }
      const ctx = { body, query, params, principal, key, req, res };
      const result =
        idempotencyKey === undefined
          ? await route.handler(ctx)
          : await deps.idempotency!({
              scope: callerScope(principal?.kind === 'user' ? principal : { keyHash: key?.hash ?? deps.presentKey!(req, (auth as { scope: Scope }).scope).hash }),
              key: idempotencyKey,
              fingerprint: requestFingerprint(req.method, route.path, req.body),
              verifyCaller: async () => key && (await deps.authenticate(req, auth)),
              handle: (messageId, retaken) => Promise.resolve(route.handler({ ...ctx, messageId, retaken })),
            });
      if (!result) return;
      if (result.headers) res.set(result.headers);
      if (result.body === undefined) res.status(result.status).end();
      else res.status(result.status).json(result.body);
    });
  }

  if (deps.dashboard) app.use(deps.dashboard);

  app.use((_req: Request, _res: Response, next: NextFunction) => next(notFound('Not Found')));

  if (deps.screenError) {
    const screen = deps.screenError;
    app.use((err: unknown, req: Request, _res: Response, next: NextFunction) => {
      screen(err, req).then(next, next);
    });
  }

  // The one place where errors become the spec's `{message, error, statusCode}`.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const { status, body, unexpected, headers } = mapError(err);
    if (unexpected) req.log?.error({ err }, 'unhandled error');
    if (res.headersSent) {
      res.end();
      return;
    }
    if (headers) res.set(headers);
    res.status(status).json(body);
  });

  return app;
}
