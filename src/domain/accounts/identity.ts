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
  | { type: 'IdentityChecked'; data: { id: string; accountId: string; checkedAt: string } & IdentityChecks };

export type IdentityCommand =
  | { kind: 'add'; id: string; accountId: string; identityKind: IdentityKind; value: string; now: string; checks: IdentityChecks }
  | { kind: 'check'; id: string; accountId: string; now: string; checks: IdentityChecks };

export interface IdentityState {
  identity: { id: string; accountId: string; kind: IdentityKind; value: string } | null;
  checks: IdentityChecks | null;
}

/** Sender verification: a domain needs DKIM, SPF and MAIL FROM; a single address its own check. */
export function isVerified(kind: IdentityKind, checks: IdentityChecks): boolean {
  return kind === 'email' ? checks.dkim === 'verified' : checks.dkim === 'verified' && checks.spf === 'verified' && checks.mailFrom === 'verified';
}

export const identityStream = (id: string) => `identity-${id}`;

export const identityDecider: Decider<IdentityState, IdentityCommand, IdentityEvent> = {
  initialState: { identity: null, checks: null },
  evolve(state, event) {
    if (event.type === 'IdentityAdded') {
      const { id, accountId, kind, value, dkim, spf, mailFrom, dnsRecords } = event.data;
      return { identity: { id, accountId, kind, value }, checks: { dkim, spf, mailFrom, dnsRecords } };
    }
    if (event.type === 'IdentityChecked') {
      const { dkim, spf, mailFrom, dnsRecords } = event.data;
      return { ...state, checks: { dkim, spf, mailFrom, dnsRecords } };
    }
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
    if (!state.identity || state.identity.accountId !== command.accountId) throw notFound('identity not found');
    return [{ type: 'IdentityChecked', data: { id: command.id, accountId: command.accountId, checkedAt: command.now, ...command.checks } }];
  },
};
