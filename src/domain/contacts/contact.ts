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
/**
 * The person is forgotten: their keys are destroyed, so their contact fields and messages read as
 * redacted everywhere, and read models drop or null what they showed of them. Names the person by
 * keyed hash only. Recorded even for someone who never was a contact (only a recipient).
 */
export interface ContactErased {
  type: 'ContactErased';
  data: { accountId: string; person: string; contactId: string | null; erasedAt: string };
}
export const CONTACT_ERASED = 'ContactErased';
export type ContactEvent = ContactUpserted | ContactErased;

/** Fields the caller sent; absent fields keep their stored value. `addListIds` are added, not replaced. */
export interface UpsertContact {
  contactId: string;
  accountId: string;
  email: string;
  fields: Partial<ContactFields>;
  addListIds?: string[];
  now: string;
}

export interface EraseContact {
  accountId: string;
  person: string;
  now: string;
  /** the person has data keys (messages sealed for them since their last erasure: sent while it ran, or after) */
  keysLeft?: boolean;
}

export interface ContactState {
  contactId: string | null;
  fields: ContactFields | null;
  /** erased and not upserted since: erasing again records nothing */
  erased?: boolean;
}

/**
 * Streams keyed by account and the person's keyed hash (of the normalised email: trimmed, lower-cased
 * as a whole — local part included, the same key suppressions use), so the upsert key is the stream
 * and no stream name holds an address.
 *
 * A contact's `status` here is what the caller last upserted. Suppressions live in their own
 * streams and this decider has no event that touches them: an upsert never lifts a suppression, and
 * the contacts read model shows an active suppression over the upserted status.
 */
export const contactStream = (accountId: string, person: string) => `contact-${accountId}-${person}`;
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

const evolveContact: Decider<ContactState, unknown>['evolve'] = (state, event) => {
  if (event.type === 'ContactErased') return { contactId: null, fields: null, erased: true };
  if (event.type !== 'ContactUpserted') return state;
  // An upsert whose fields can no longer be read (its person erased since): nothing to build on.
  return { contactId: event.data.contactId, fields: event.data.fields ?? null };
};

/** Forgetting a person: once, until they are upserted again or something is sealed for them again. */
export const contactEraser: Decider<ContactState, EraseContact, ContactErased> = {
  initialState: { contactId: null, fields: null },
  evolve: evolveContact,
  decide(command, state) {
    if (state.erased && !command.keysLeft) return [];
    return [{ type: 'ContactErased', data: { accountId: command.accountId, person: command.person, contactId: state.contactId, erasedAt: command.now } }];
  },
};

export const contactDecider: Decider<ContactState, UpsertContact, ContactUpserted> = {
  initialState: { contactId: null, fields: null },
  evolve: evolveContact,
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
