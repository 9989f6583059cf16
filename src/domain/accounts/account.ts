import { badRequest, conflict, notFound } from '../errors.js';
import type { Decider } from '../decider.js';

export type EmailProviderKind = 'ses' | 'postmark' | 'sandbox';
export type TrackingMode = 'service' | 'provider' | 'none';

export interface AccountSettings {
  dailySendCap: number;
  emailProvider: EmailProviderKind;
  tracking: TrackingMode;
  /**
   * The most provider calls a second for the account across every worker (null: no limit; absent on
   * settings recorded before it existed, which is the same).
   */
  providerRatePerSecond?: number | null;
  /** message bodies and recipient addresses older than this many days become unreadable (docs/privacy.md); absent: kept */
  retentionDays?: number;
}

/** A century: retention is about forgetting, and a larger number is a typo. */
export const MAX_RETENTION_DAYS = 36_500;
export interface SmsSettings {
  enabled: boolean;
  originationNumber: string | null;
  sandbox: boolean;
  sandboxDestinations: string[];
}

/**
 * The read models hold the cap in a 32-bit integer column: a larger cap, once in the log, would stop
 * the accounts read model at that event for good (and every request waiting on it would time out).
 */
export const MAX_DAILY_SEND_CAP = 2_147_483_647;

export const DEFAULT_SETTINGS: AccountSettings = { dailySendCap: 1000, emailProvider: 'sandbox', tracking: 'service', providerRatePerSecond: null };
export const DEFAULT_SMS_SETTINGS: SmsSettings = {
  enabled: false,
  originationNumber: null,
  sandbox: true,
  sandboxDestinations: [],
};

export type AccountEvent =
  | { type: 'AccountCreated'; data: { accountId: string; name: string; createdAt: string; settings: AccountSettings; sms: SmsSettings } }
  | { type: 'SettingsChanged'; data: { accountId: string; settings: AccountSettings; changedAt: string } }
  | { type: 'SmsSettingsChanged'; data: { accountId: string; sms: SmsSettings; changedAt: string } }
  /** The retention job destroyed the keys of message content of the UTC days before `before` (`YYYY-MM-DD`). */
  | { type: 'MessageContentExpired'; data: { accountId: string; before: string; expiredAt: string } };

export type AccountCommand =
  | { kind: 'create'; accountId: string; name: string; now: string }
  | { kind: 'changeSettings'; patch: Partial<Omit<AccountSettings, 'retentionDays'>> & { retentionDays?: number | null }; now: string }
  | { kind: 'expireContent'; before: string; now: string }
  | { kind: 'changeSms'; sms: SmsSettings; now: string };

export interface AccountState {
  accountId: string | null;
  name: string;
  settings: AccountSettings;
  sms: SmsSettings;
  /** the retention job's last cutoff */
  contentExpiredBefore?: string;
}

export const accountStream = (accountId: string) => `account-${accountId}`;
export const ACCOUNT_STREAM_PREFIX = 'account-';
export const CONTENT_EXPIRED = 'MessageContentExpired';

export const MAX_ACCOUNT_NAME = 200;

/**
 * What is wrong with an account name, or null. Checked in the decision, before anything is written:
 * a name that could not be stored must not fail the write of an account whose owner already exists.
 */
export function accountNameProblem(name: string): string | null {
  if (name.trim().length === 0) return 'must not be empty';
  if (name.length > MAX_ACCOUNT_NAME) return `must be at most ${MAX_ACCOUNT_NAME} characters`;
  // control characters (NUL among them) are no part of a name, and PostgreSQL stores no NUL at all
  if (/\p{Cc}/u.test(name)) return 'must not contain control characters';
  return null;
}

export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = {
  initialState: { accountId: null, name: '', settings: DEFAULT_SETTINGS, sms: DEFAULT_SMS_SETTINGS },
  evolve(state, event) {
    switch (event.type) {
      case 'AccountCreated':
        return { accountId: event.data.accountId, name: event.data.name, settings: event.data.settings, sms: event.data.sms };
      case 'SettingsChanged':
        return { ...state, settings: event.data.settings };
      case 'SmsSettingsChanged':
        return { ...state, sms: event.data.sms };
      case 'MessageContentExpired':
        return { ...state, contentExpiredBefore: event.data.before };
      default:
        return state;
    }
  },
  decide(command, state) {
    if (command.kind === 'create') {
      if (state.accountId) throw conflict('account already exists');
      const problem = accountNameProblem(command.name);
      if (problem) throw badRequest(`accountName: ${problem}`);
      return [
        {
          type: 'AccountCreated',
          data: { accountId: command.accountId, name: command.name, createdAt: command.now, settings: DEFAULT_SETTINGS, sms: DEFAULT_SMS_SETTINGS },
        },
      ];
    }
    if (!state.accountId) throw notFound('account not found');
    if (command.kind === 'expireContent') {
      // A cutoff already applied (or an earlier one, after retentionDays grew) changes nothing.
      if (state.contentExpiredBefore && state.contentExpiredBefore >= command.before) return [];
      return [{ type: 'MessageContentExpired', data: { accountId: state.accountId, before: command.before, expiredAt: command.now } }];
    }
    if (command.kind === 'changeSettings') {
      const { retentionDays, ...patch } = command.patch;
      const settings: AccountSettings = { ...state.settings, ...patch };
      if (retentionDays === null) delete settings.retentionDays;
      else if (retentionDays !== undefined) {
        if (!Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > MAX_RETENTION_DAYS) {
          throw badRequest(`retentionDays must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null to keep everything`);
        }
        settings.retentionDays = retentionDays;
      }
      if (!Number.isInteger(settings.dailySendCap) || settings.dailySendCap < 1) {
        throw badRequest('dailySendCap must be a positive integer');
      }
      if (settings.dailySendCap > MAX_DAILY_SEND_CAP) throw badRequest(`dailySendCap must be at most ${MAX_DAILY_SEND_CAP}`);
      const rate = settings.providerRatePerSecond;
      // any positive rate: src/jobs/provider-rate.ts makes the nearest the limiter can count of one it cannot
      if (rate !== undefined && rate !== null && !(Number.isFinite(rate) && rate > 0)) throw badRequest('providerRatePerSecond must be a positive number or null');
      if (JSON.stringify(settings) === JSON.stringify(state.settings)) return [];
      return [{ type: 'SettingsChanged', data: { accountId: state.accountId, settings, changedAt: command.now } }];
    }
    if (command.sms.enabled && command.sms.sandbox && command.sms.sandboxDestinations.length > 10) {
      throw badRequest('sandboxDestinations: at most 10 verified destination numbers');
    }
    if (JSON.stringify(command.sms) === JSON.stringify(state.sms)) return [];
    return [{ type: 'SmsSettingsChanged', data: { accountId: state.accountId, sms: command.sms, changedAt: command.now } }];
  },
};
