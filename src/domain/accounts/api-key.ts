import { badRequest, notFound } from '../errors.js';
import type { Decider } from '../decider.js';
import type { Scope } from '../principal.js';

export interface ApiKeyCreated {
  type: 'ApiKeyCreated';
  data: {
    id: string;
    accountId: string;
    name: string;
    /** SHA-256 (hex) of the secret: the secret itself is never stored */
    keyHash: string;
    /** the first characters of the secret, so a user can tell keys apart */
    prefix: string;
    scopes: Scope[];
    expiresAt: string | null;
    ipAllowlist: string[];
    dailyLimit: number | null;
    createdAt: string;
    createdBy: string;
  };
}
export interface ApiKeyRevoked {
  type: 'ApiKeyRevoked';
  data: { id: string; revokedAt: string; revokedBy: string };
}
export type ApiKeyEvent = ApiKeyCreated | ApiKeyRevoked;

export type CreateApiKey = { kind: 'create'; accountDailyCap: number } & ApiKeyCreated['data'];
export type RevokeApiKey = { kind: 'revoke'; id: string; accountId: string; now: string; by: string };

export interface ApiKeyState {
  key: ApiKeyCreated['data'] | null;
  revokedAt: string | null;
}

export const apiKeyStream = (id: string) => `apikey-${id}`;

export const apiKeyDecider: Decider<ApiKeyState, CreateApiKey | RevokeApiKey, ApiKeyEvent> = {
  initialState: { key: null, revokedAt: null },
  evolve(state, event) {
    if (event.type === 'ApiKeyCreated') return { ...state, key: event.data };
    if (event.type === 'ApiKeyRevoked') return { ...state, revokedAt: event.data.revokedAt };
    return state;
  },
  decide(command, state) {
    if (command.kind === 'create') {
      if (state.key) return [];
      const { kind: _k, accountDailyCap, ...data } = command;
      // A key born expired could never be used: almost always a typo in the date.
      if (data.expiresAt !== null && Date.parse(data.expiresAt) <= Date.parse(data.createdAt)) {
        throw badRequest(`expiresAt must be in the future (it is ${data.expiresAt})`);
      }
      if (data.dailyLimit !== null && data.dailyLimit >= accountDailyCap) {
        throw badRequest(`dailyLimit must be lower than the account daily send cap (${accountDailyCap})`);
      }
      return [{ type: 'ApiKeyCreated', data }];
    }
    // A key of another account is reported exactly like a missing one.
    if (!state.key || state.key.accountId !== command.accountId) throw notFound('API key not found');
    if (state.revokedAt) return [];
    return [{ type: 'ApiKeyRevoked', data: { id: command.id, revokedAt: command.now, revokedBy: command.by } }];
  },
};
