import type { Decider } from '../decider.js';

export const CONTACT_STATUSES = ['subscribed', 'unsubscribed', 'bounced', 'complained', 'suppressed'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

export interface ContactFields {
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  tags: string[];
  status: ContactStatus;
  listIds: string[];
}

export interface ContactUpserted {
  type: 'ContactUpserted';
  data: { contactId: string; accountId: string; email: string; created: boolean; fields: ContactFields; at: string };
}
export type ContactEvent = ContactUpserted;

/** Fields the caller sent; absent fields keep their stored value. `addListIds` are added, not replaced. */
export interface UpsertContact {
  contactId: string;
  accountId: string;
  email: string;
  fields: Partial<ContactFields>;
  addListIds?: string[];
  now: string;
}

export interface ContactState {
  contactId: string | null;
  fields: ContactFields | null;
}

/**
 * Streams keyed by account and normalised email (normaliseEmail: trimmed, lower-cased as a whole —
 * local part included, the same key suppressions use), so the upsert key is the stream.
 *
 * A contact's `status` here is what the caller last upserted. Suppressions live in their own
 * streams and this decider has no event that touches them: an upsert never lifts a suppression, and
 * the contacts read model shows an active suppression over the upserted status.
 */
export const contactStream = (accountId: string, email: string) => `contact-${accountId}-${email}`;
export const CONTACT_STREAM_PREFIX = 'contact-';

const EMPTY: ContactFields = { firstName: null, lastName: null, company: null, tags: [], status: 'subscribed', listIds: [] };

const unique = (xs: string[]) => [...new Set(xs)];
const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Field by field, never by serialising: stored events come back from jsonb with their keys reordered,
 * so a JSON.stringify comparison would call every re-import a change.
 */
function sameFields(a: ContactFields, b: ContactFields): boolean {
  return (
    a.firstName === b.firstName &&
    a.lastName === b.lastName &&
    a.company === b.company &&
    a.status === b.status &&
    sameList(a.tags, b.tags) &&
    sameList(a.listIds, b.listIds)
  );
}

export const contactDecider: Decider<ContactState, UpsertContact, ContactEvent> = {
  initialState: { contactId: null, fields: null },
  evolve(state, event) {
    if (event.type !== 'ContactUpserted') return state;
    return { contactId: event.data.contactId, fields: event.data.fields };
  },
  decide(command, state) {
    const current = state.fields ?? EMPTY;
    const next: ContactFields = {
      firstName: command.fields.firstName !== undefined ? command.fields.firstName : current.firstName,
      lastName: command.fields.lastName !== undefined ? command.fields.lastName : current.lastName,
      company: command.fields.company !== undefined ? command.fields.company : current.company,
      tags: command.fields.tags !== undefined ? unique(command.fields.tags) : current.tags,
      status: command.fields.status ?? current.status,
      listIds: unique([...(command.fields.listIds ?? current.listIds), ...(command.addListIds ?? [])]),
    };
    // Same data again: nothing to record (this is what makes a re-import append no events).
    if (state.fields && sameFields(next, current)) return [];
    return [
      {
        type: 'ContactUpserted',
        data: {
          contactId: state.contactId ?? command.contactId,
          accountId: command.accountId,
          email: command.email,
          created: !state.fields,
          fields: next,
          at: command.now,
        },
      },
    ];
  },
};
