import type { Decider } from '../decider.js';
import { notFound } from '../errors.js';

/**
 * Account-wide suppression of one address (email or E.164 phone), in its own stream
 * `suppression-<accountId>-<person>` (the address's keyed hash, never the address): the stream's expected revision makes concurrent ingests of the same
 * bounce decide once. Contacts show it as their status; the webhook process manager fans it out.
 */
export type SuppressionReason = 'bounced' | 'complained' | 'unsubscribed' | 'manual' | 'sms_optout';
/** how it came about: `import` is a list brought from elsewhere (another provider's suppressions), whatever its reason */
export type SuppressionSource = 'one_click' | 'form' | 'bounce' | 'complaint' | 'manual' | 'sms_optout' | 'import';

export interface AddressSuppressed {
  type: 'AddressSuppressed';
  data: {
    accountId: string;
    /** null: an address no longer on record (its person erased), suppressed by its keyed hash alone (the event's `metadata.person`) */
    value: string | null;
    kind: 'email' | 'phone';
    reason: SuppressionReason;
    source: SuppressionSource;
    messageId: string | null;
    campaignId: string | null;
    detail: string | null;
    occurredAt: string;
    /** an imported entry whose importer asked that webhooks not be told (a migration of a whole list) */
    quiet?: true;
  };
}
export interface SuppressionLifted {
  type: 'SuppressionLifted';
  data: { accountId: string; value: string; kind: 'email' | 'phone'; liftedAt: string; by: string };
}
export type SuppressionEvent = AddressSuppressed | SuppressionLifted;

export type SuppressionCommand =
  | { kind: 'suppress'; data: AddressSuppressed['data'] }
  | { kind: 'lift'; accountId: string; value: string; addressKind: 'email' | 'phone'; now: string; by: string };

export interface SuppressionState {
  active: AddressSuppressed['data'] | null;
}

export const suppressionStream = (accountId: string, person: string) => `suppression-${accountId}-${person}`;
export const SUPPRESSION_STREAM_PREFIX = 'suppression-';

/**
 * Outbound webhook event for a suppression (the four contact.* events of docs/webhooks.md), or null
 * for none. An imported entry is `contact.suppressed` whatever its reason (no provider of ours reported
 * a bounce, nor did the recipient click anything here), or nothing when its import was quiet. An
 * erased person's unsubscribe (no address) names nothing a receiver could act on.
 */
export function webhookEventFor({ reason, source, quiet, value }: Pick<AddressSuppressed['data'], 'reason' | 'source' | 'quiet' | 'value'>): 'contact.bounced' | 'contact.complained' | 'contact.unsubscribed' | 'contact.suppressed' | null {
  if (value === null || quiet) return null;
  if (source === 'import') return 'contact.suppressed';
  if (reason === 'bounced') return 'contact.bounced';
  if (reason === 'complained') return 'contact.complained';
  if (reason === 'unsubscribed') return 'contact.unsubscribed';
  return 'contact.suppressed';
}

/**
 * `data.source` of a suppression's webhook: one of the values receivers are promised (one_click, form,
 * bounce, complaint, manual, sms_optout). An imported entry is an admin's act through the admin API or
 * the dashboard, which is what `manual` says; the suppression list itself keeps `import`.
 */
export const webhookSourceOf = (source: SuppressionSource): Exclude<SuppressionSource, 'import'> => (source === 'import' ? 'manual' : source);

/** How much a reason says about an address: a complaint outranks a hard bounce, which outranks the rest. */
const WEIGHT: Partial<Record<SuppressionReason, number>> = { complained: 2, bounced: 1 };
const weightOf = (reason: SuppressionReason) => WEIGHT[reason] ?? 0;

/**
 * Whether a suppression recorded over an active one says something new: a provider's report of a
 * complaint (or a hard bounce) about an address already suppressed for a lesser reason. The recipient
 * who unsubscribed and then marks an earlier mail as spam did complain, and receivers are told so.
 */
const outranks = (next: AddressSuppressed['data'], active: AddressSuppressed['data']) =>
  (next.source === 'complaint' || next.source === 'bounce') && weightOf(next.reason) > weightOf(active.reason);

export const suppressionDecider: Decider<SuppressionState, SuppressionCommand, SuppressionEvent> = {
  initialState: { active: null },
  evolve(state, event) {
    if (event.type === 'AddressSuppressed') return { active: event.data };
    if (event.type === 'SuppressionLifted') return { active: null };
    return state;
  },
  decide(command, state) {
    if (command.kind === 'suppress') {
      // Already suppressed: a repeated bounce, a second unsubscribe click or a retried ingest changes nothing.
      if (state.active && !outranks(command.data, state.active)) return [];
      return [{ type: 'AddressSuppressed', data: command.data }];
    }
    if (!state.active) throw notFound(`${command.value} is not suppressed`);
    return [
      {
        type: 'SuppressionLifted',
        data: { accountId: command.accountId, value: command.value, kind: command.addressKind, liftedAt: command.now, by: command.by },
      },
    ];
  },
};
