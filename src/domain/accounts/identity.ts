import { notFound } from '../errors.js';
import type { Decider } from '../decider.js';

export type CheckStatus = 'pending' | 'verified' | 'failed';
export type IdentityKind = 'domain' | 'email';
export interface DnsRecord {
  type: string;
  name: string;
  value: string;
}

export interface IdentityChecks {
  dkim: CheckStatus;
  spf: CheckStatus;
  mailFrom: CheckStatus;
  dnsRecords: DnsRecord[];
}

export type IdentityEvent =
  | { type: 'IdentityAdded'; data: { id: string; accountId: string; kind: IdentityKind; value: string; createdAt: string } & IdentityChecks }
  | { type: 'IdentityChecked'; data: { id: string; accountId: string; checkedAt: string } & IdentityChecks }
  /** No longer one of the account's senders; the identity at the provider is left as it is. */
  | { type: 'IdentityRemoved'; data: { id: string; accountId: string; kind: IdentityKind; value: string; removedAt: string } };

export type IdentityCommand =
  | { kind: 'add'; id: string; accountId: string; identityKind: IdentityKind; value: string; now: string; checks: IdentityChecks }
  | { kind: 'check'; id: string; accountId: string; now: string; checks: IdentityChecks }
  | { kind: 'remove'; id: string; accountId: string; now: string };

export interface IdentityState {
  identity: { id: string; accountId: string; kind: IdentityKind; value: string } | null;
  checks: IdentityChecks | null;
  removed: boolean;
}

/** Sender verification: a domain needs DKIM, SPF and MAIL FROM; a single address its own check. */
export function isVerified(kind: IdentityKind, checks: IdentityChecks): boolean {
  return kind === 'email' ? checks.dkim === 'verified' : checks.dkim === 'verified' && checks.spf === 'verified' && checks.mailFrom === 'verified';
}

export const identityStream = (id: string) => `identity-${id}`;

export const identityDecider: Decider<IdentityState, IdentityCommand, IdentityEvent> = {
  initialState: { identity: null, checks: null, removed: false },
  evolve(state, event) {
    if (event.type === 'IdentityAdded') {
      const { id, accountId, kind, value, dkim, spf, mailFrom, dnsRecords } = event.data;
      return { identity: { id, accountId, kind, value }, checks: { dkim, spf, mailFrom, dnsRecords }, removed: false };
    }
    if (event.type === 'IdentityChecked') {
      const { dkim, spf, mailFrom, dnsRecords } = event.data;
      return { ...state, checks: { dkim, spf, mailFrom, dnsRecords } };
    }
    if (event.type === 'IdentityRemoved') return { ...state, removed: true };
    return state;
  },
  decide(command, state) {
    if (command.kind === 'add') {
      if (state.identity) return [];
      return [
        {
          type: 'IdentityAdded',
          data: { id: command.id, accountId: command.accountId, kind: command.identityKind, value: command.value, createdAt: command.now, ...command.checks },
        },
      ];
    }
    // Another account's, or removed (the same domain added again is a new identity): nothing to act on.
    if (!state.identity || state.identity.accountId !== command.accountId || state.removed) throw notFound('identity not found');
    if (command.kind === 'remove') {
      const { id, accountId, kind, value } = state.identity;
      return [{ type: 'IdentityRemoved', data: { id, accountId, kind, value, removedAt: command.now } }];
    }
    return [{ type: 'IdentityChecked', data: { id: command.id, accountId: command.accountId, checkedAt: command.now, ...command.checks } }];
  },
};
