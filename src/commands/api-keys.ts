import { createHash, randomBytes } from 'node:crypto';
import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import { apiKeyDecider, apiKeyStream } from '../domain/accounts/api-key.js';
import { AppError } from '../domain/errors.js';
import type { EventStore } from '../ports/event-store.js';
import type { Scope } from '../domain/principal.js';
import { execute } from './execute.js';
import { callerMetadata, type Caller } from './caller.js';
import { accountRow } from '../read-models/accounts.js';
import { apiKeysOf } from '../read-models/api-keys.js';
import type { WaitForProjection } from './read-your-writes.js';

export const API_KEY_PREFIX = 'cl_';

export const hashApiKey = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** An API key as the request presents it, with what its checks are made against. */
export interface PresentedKey {
  hash: string;
  clientIp: string | null;
  scope: Scope;
  at: Date;
}

export interface CreateApiKeyInput {
  name: string;
  scopes: Scope[];
  expiresAt?: string | null;
  /** single addresses, normalised (src/domain/ip.ts) */
  ipAllowlist?: string[];
  dailyLimit?: number | null;
}

function toView(row: Record<string, any>) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    expiresAt: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    ipAllowlist: row.ip_allowlist,
    dailyLimit: row.daily_limit,
    createdAt: new Date(row.created_at).toISOString(),
    revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  };
}

export function createApiKeyCommands(deps: { eventStore: EventStore; db: Db; waitFor: WaitForProjection }) {
  return {
    async create(accountId: string, caller: Caller, input: CreateApiKeyInput) {
      const account = await accountRow(deps.db, accountId, ['daily_send_cap']);
      const id = createId();
      const secret = API_KEY_PREFIX + randomBytes(32).toString('base64url');
      const now = new Date().toISOString();
      const data = {
        id,
        accountId,
        name: input.name,
        keyHash: hashApiKey(secret),
        prefix: secret.slice(0, API_KEY_PREFIX.length + 6),
        scopes: [...new Set(input.scopes)],
        expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
        ipAllowlist: [...new Set(input.ipAllowlist ?? [])],
        dailyLimit: input.dailyLimit ?? null,
        createdAt: now,
        createdBy: caller.actor,
      };
      const result = await execute(
        apiKeyDecider,
        { kind: 'create', accountDailyCap: account.daily_send_cap, ...data },
        { eventStore: deps.eventStore, streamId: apiKeyStream(id), metadata: callerMetadata(caller) },
      );
      // The key exists once its event is appended: answered with its secret even when the read model is
      // late (no worker running), which a 503 would lose for good, leaving a live key nobody holds and a
      // retry making a second one. It works once a worker has caught the read model up.
      await deps.waitFor('accounts', result.position).catch((err) => {
        if (!(err instanceof AppError && err.status === 503)) throw err;
      });
      const { keyHash: _h, accountId: _a, createdBy: _c, ...rest } = data;
      return { ...rest, key: secret };
    },

    async revoke(accountId: string, caller: Caller, id: string) {
      const now = new Date().toISOString();
      const result = await execute(
        apiKeyDecider,
        { kind: 'revoke', id, accountId, now, by: caller.actor },
        { eventStore: deps.eventStore, streamId: apiKeyStream(id), metadata: callerMetadata(caller) },
      );
      // Only answer once every process reading the key table will refuse the key.
      await deps.waitFor('accounts', result.position);
      return { id, revokedAt: result.state.revokedAt };
    },

    async list(accountId: string) {
      return (await apiKeysOf(deps.db, accountId)).map(toView);
    },
  };
}
