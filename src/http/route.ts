import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { PresentedKey } from '../commands/api-keys.js';
import type { Principal } from '../domain/principal.js';
import type { RouteAuth } from './principal.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';

export interface RouteContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  principal: Principal | undefined;
  /** the key to check, for a route whose auth is `inHandler` (its principal is then undefined) */
  key: PresentedKey | undefined;
  req: Request;
  res: Response;
  /**
   * For a route declared `idempotent`, called with an Idempotency-Key: the id the `index`-th message the
   * request creates must have, the same for every retry of the request. Undefined otherwise.
   */
  messageId?: (index: number) => string;
  /**
   * The request takes over the claim of an earlier attempt whose process stopped answering: its
   * messages may be queued already, and are then answered as they are, not admitted again.
   */
  retaken?: boolean;
}

/** What a handler answers: a status and a JSON body, or `undefined` when it wrote the response itself. */
export type RouteResult = { status: number; body?: unknown; headers?: Record<string, string> } | undefined;

/**
 * One route, declared once: its zod schemas validate the request and also generate /openapi.json.
 */
export interface RouteDef<B = unknown, Q = unknown, P = unknown> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  /** The operation's name in /openapi.json, for a route whose method and path make a poor one (src/http/openapi.ts names the rest) */
  operationId?: string;
  auth: RouteAuth;
  /**
   * A public route that checks credentials of its own (in `beforeBody` or its handler), for the docs:
   * Postmark's HTTP Basic, or the bearer METRICS_TOKEN when one is set.
   */
  ownCredentials?: 'postmarkBasic' | 'metricsToken';
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** status → description, and optionally the response schema (and its media type, default JSON) for the docs */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /** 'json' (default), or 'text': the raw body as a string (SNS posts text/plain; RFC 8058 posts forms) */
  bodyType?: 'json' | 'text';
  /**
   * Runs before the body is read or parsed: a public route that checks its own credentials does it
   * here, so a caller without them learns nothing about what its body would have given (and costs no parse).
   */
  beforeBody?(req: Request, res: Response): void;
  /**
   * For events a provider sends (signed, genuine): a NUL or an unpaired surrogate in the body is
   * replaced by U+FFFD and the event recorded, where any other route refuses it with a 400.
   */
  replaceUnstorable?: boolean;
  /** A list field of the body whose items the handler checks one by one (a batch): one bad item is that item's 400, not the request's. */
  itemsCheckedApart?: string;
  /**
   * Honours an `Idempotency-Key` header: the same key and body from the same caller within 24 h answer
   * the first response again and do nothing; the handler names its messages with `messageId`. The
   * `body` schema runs before the key's record is read, so it must not depend on the time: a rule
   * that does (a sendAt that must lie ahead) goes in the handler, or a remembered request would be
   * refused once its time had passed instead of answered again.
   */
  idempotent?: boolean;
  handler(ctx: RouteContext<B, Q, P>): Promise<RouteResult> | RouteResult;
}

/**
 * An instant `hours` ahead of now, on the hour, for the example of a field that must lie in the near
 * future (a scheduled send, a secret's rotation). Given as a getter in `.meta()`, it is read each time
 * the document is built: a fixed date ends up beyond the limit or in the past, and is refused.
 */
export function instantAhead(hours: number): string {
  const HOUR = 3_600_000;
  return new Date((Math.ceil(Date.now() / HOUR) + hours) * HOUR).toISOString().replace('.000Z', 'Z');
}

export function defineRoute<B = undefined, Q = Record<string, never>, P = Record<string, never>>(
  def: RouteDef<B, Q, P>,
): RouteDef<B, Q, P> {
  return def;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any, any, any>;
