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

/** Streams keyed by account and normalised email: the upsert key is the stream. */
export const contactStream = (accountId: string, email: string) => `contact-${accountId}-${email}`;
export const CONTACT_STREAM_PREFIX = 'contact-';

const EMPTY: ContactFields = { firstName: null, lastName: null, company: null, tags: [], status: 'subscribed', listIds: [] };

const unique = (xs: string[]) => [...new Set(xs)];

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
    if (state.fields && JSON.stringify(next) === JSON.stringify(current)) return [];
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
