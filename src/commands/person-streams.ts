import { contactStream } from '../domain/contacts/contact.js';
import { suppressionStream } from '../domain/suppression/suppression.js';
import type { EventStore } from '../ports/event-store.js';
import type { PersonOf } from '../ports/key-store.js';

/**
 * The streams of a person's contact and suppressions. They are named by the person's keyed hash; a
 * database first run by a version that kept personal data in clear (`namedByAddress`) named them by
 * the normalised address, and those streams still hold the history of the contacts and suppressions
 * recorded then. For such a database a person whose keyed stream does not exist yet goes on under the
 * address name where that exists: the contact keeps its id, a suppression recorded then can be
 * lifted, and suppressing the address again is seen as the repeat it is. Elsewhere the names cost no
 * read.
 */
export function createPersonStreams(deps: { eventStore: Pick<EventStore, 'readStream' | 'streamRevisions'>; personOf: PersonOf; namedByAddress: boolean }) {
  async function existing(names: string[]): Promise<Set<string>> {
    if (deps.eventStore.streamRevisions) return new Set((await deps.eventStore.streamRevisions(names)).keys());
    const read = await Promise.all(names.map(async (name) => ((await deps.eventStore.readStream(name)).length > 0 ? name : null)));
    return new Set(read.filter((name) => name !== null));
  }

  /** Each pair's keyed name, or its address name where only that stream exists. */
  async function resolve(pairs: [keyed: string, byAddress: string | null][]): Promise<string[]> {
    const keyed = pairs.map(([name]) => name);
    const asked = pairs.flatMap(([name, byAddress]) => (byAddress ? [name, byAddress] : []));
    if (!deps.namedByAddress || asked.length === 0) return keyed;
    const found = await existing(asked);
    return pairs.map(([name, byAddress]) => (byAddress && !found.has(name) && found.has(byAddress) ? byAddress : name));
  }

  /** The contact streams of normalised email addresses, in their order. */
  const contacts = (accountId: string, emails: string[]): Promise<string[]> =>
    resolve(emails.map((email) => [contactStream(accountId, deps.personOf(email)), contactStream(accountId, email)]));

  return {
    contacts,
    contact: async (accountId: string, email: string): Promise<string> => (await contacts(accountId, [email]))[0],

    /** The suppression streams of normalised values, or of an erased person's hash alone (`value` null). */
    suppressions(entries: { accountId: string; value: string | null; person?: string }[]): Promise<string[]> {
      return resolve(
        entries.map(({ accountId, value, person }) =>
          value === null ? [suppressionStream(accountId, person!), null] : [suppressionStream(accountId, deps.personOf(value)), suppressionStream(accountId, value)],
        ),
      );
    },
  };
}
export type PersonStreams = ReturnType<typeof createPersonStreams>;
