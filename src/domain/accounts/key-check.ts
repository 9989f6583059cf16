import type { Scope } from '../principal.js';

/** Why a presented API key is refused, most severe first; each has its own answer (docs/api.md). */
export type KeyRefusal = 'invalid' | 'expired' | 'ip' | 'scope';

/** What the check needs of the key the presented secret names (its api_keys row). */
export interface StoredKey {
  revokedAt: Date | null;
  expiresAt: Date | null;
  /** canonical addresses (normaliseIp); empty allows every address */
  ipAllowlist: string[];
  scopes: Scope[];
}

/** The request that presents the key. */
export interface KeyUse {
  /** canonical, or null when the request's address could not be read */
  clientIp: string | null;
  scope: Scope;
  at: Date;
}

/**
 * The per-key checks every keyed request passes, in order of severity: no such key or a revoked
 * one, then expiry (refused after the expiry instant, accepted at it), the client address when the
 * key has an allowlist (an unknown address is not on it), and the scope the route requires. Null:
 * accepted.
 */
export function keyRefusal(key: StoredKey | null, use: KeyUse): KeyRefusal | null {
  if (!key || key.revokedAt !== null) return 'invalid';
  if (key.expiresAt !== null && key.expiresAt.getTime() < use.at.getTime()) return 'expired';
  if (key.ipAllowlist.length > 0 && (use.clientIp === null || !key.ipAllowlist.includes(use.clientIp))) return 'ip';
  if (!key.scopes.includes(use.scope)) return 'scope';
  return null;
}
