import type { Request } from 'express';
import type { Db } from '../adapters/db/knex.js';
import { hashApiKey } from '../commands/api-keys.js';
import { forbidden, unauthorized } from '../domain/errors.js';
import { clientIp } from '../domain/ip.js';
import { createGroupCommit } from '../group-commit.js';
import type { Authenticate } from './app.js';
import type { JwtIssuer } from './jwt.js';
import type { Principal, Scope } from './principal.js';

const LAST_USED_RESOLUTION_MS = 60_000;

interface ApiKeyRow {
  key_hash: string;
  id: string;
  account_id: string;
  scopes: Scope[];
  expires_at: Date | null;
  ip_allowlist: string[];
  daily_limit: number | null;
  revoked_at: Date | null;
}

/**
 * API keys are looked up by the SHA-256 of the presented secret (one indexed read, no per-key loop,
 * nothing secret compared in JavaScript) on every request: no cache, so a revocation is seen by the very
 * next request in every process. Checks run in SPEC.md §5.4's order of severity: unknown or revoked,
 * expired, client IP, scope.
 */
export function createAuthenticator(deps: { db: Db; jwt: JwtIssuer; now?: () => Date }): Authenticate {
  const now = deps.now ?? (() => new Date());
  const lastUsedWritten = new Map<string, number>();

  function touch(apiKeyId: string) {
    const t = Date.now();
    if ((lastUsedWritten.get(apiKeyId) ?? 0) > t - LAST_USED_RESOLUTION_MS) return;
    lastUsedWritten.set(apiKeyId, t);
    deps
      .db('api_key_usage')
      .insert({ api_key_id: apiKeyId, last_used_at: new Date(t) })
      .onConflict('api_key_id')
      .merge()
      .catch(() => lastUsedWritten.delete(apiKeyId));
  }

  // Requests arriving together look their keys up in one statement. A request never shares a lookup
  // that was already running when it arrived, so a revocation is still seen by the next request.
  const keyLookups = createGroupCommit<string, ApiKeyRow | undefined>(async (hashes) => {
    const { rows } = await deps.db.raw(
      `SELECT key_hash, id, account_id, scopes, expires_at, ip_allowlist, daily_limit, revoked_at FROM api_keys WHERE key_hash = ANY(?::text[])`,
      [[...new Set(hashes)]],
    );
    const byHash = new Map<string, ApiKeyRow>(rows.map((r: ApiKeyRow) => [r.key_hash, r]));
    return hashes.map((h) => byHash.get(h));
  });

  async function byApiKey(req: Request, scope: Scope): Promise<Principal> {
    const secret = req.get('x-api-key');
    if (!secret) throw unauthorized('invalid API key');
    const key = await keyLookups.add(hashApiKey(secret));
    if (!key || key.revoked_at) throw unauthorized('invalid API key');
    if (key.expires_at && new Date(key.expires_at).getTime() <= now().getTime()) throw unauthorized('API key expired');
    const allow = key.ip_allowlist;
    if (allow.length > 0) {
      const ip = clientIp(req.headers['x-forwarded-for'], req.socket.remoteAddress);
      if (!ip || !allow.includes(ip)) throw unauthorized('API key denied for this client IP');
    }
    if (!key.scopes.includes(scope)) throw forbidden(`API key is missing required scope: ${scope}`);
    touch(key.id);
    return { kind: 'apiKey', accountId: key.account_id, apiKeyId: key.id, scopes: key.scopes, dailyLimit: key.daily_limit };
  }

  async function byJwt(req: Request): Promise<Principal> {
    const header = req.get('authorization');
    const token = header?.match(/^Bearer\s+(.+)$/i)?.[1];
    if (!token) {
      if (req.get('x-api-key')) throw forbidden('API keys cannot call admin endpoints; use a dashboard token');
      throw unauthorized('missing or invalid dashboard token');
    }
    const user = await deps.jwt.verify(token);
    if (!user) throw unauthorized('missing or invalid dashboard token');
    return { kind: 'user', accountId: user.accountId, userId: user.userId };
  }

  return async (req, auth) => {
    switch (auth.kind) {
      case 'public':
        return undefined;
      case 'jwt':
        return byJwt(req);
      case 'apiKey':
        return byApiKey(req, auth.scope);
      case 'apiKeyOrJwt':
        return req.get('authorization') && !req.get('x-api-key') ? byJwt(req) : byApiKey(req, auth.scope);
    }
  };
}
