import { randomUUID } from 'node:crypto';
import type { Db } from '../adapters/db/knex.js';
import { contactDecider, contactEraser, type ContactState, type ContactStatus, type UpsertContact } from '../domain/contacts/contact.js';
import { checkImportRows, MAX_IMPORT, type ContactInput } from '../domain/contacts/contact-input.js';
import { normaliseEmail } from '../domain/email/address.js';
import { normaliseAddress } from '../domain/privacy/personal-data.js';
import { deterministicEventId } from '../domain/event-id.js';
import { badRequest, notFound } from '../domain/errors.js';
import { laterPosition, WrongExpectedRevisionError, type EventStore, type Position, type StreamAppend } from '../ports/event-store.js';
import { execute } from './execute.js';
import type { WaitForProjection } from './read-your-writes.js';
import type { KeyStore, PersonOf } from '../ports/key-store.js';
import { callerMetadata, type Caller } from './caller.js';
import { createPersonStreams, type PersonStreams } from './person-streams.js';
import { contactRow, contactsByEmail, contactsPage, contactView } from '../read-models/contacts.js';

export { contactInput, MAX_IMPORT, type ContactInput } from '../domain/contacts/contact-input.js';

/** Contacts decided and appended together: one commit per chunk (see `import`). */
const CHUNK = 500;
/** parallel stream-by-stream upserts for the rows a chunk could not take */
const CONCURRENCY = 16;

type Outcome = 'created' | 'updated' | 'unchanged';
interface Row {
  email: string;
  input: ContactInput;
}
/** A row the read model calls unchanged, with its stream and the revision the read model's row is at. */
interface Unchanged {
  item: Row;
  streamId: string;
  revision: number | 'no_stream';
}

/** The decider's state as the read model last saw it, and the stream revision that state is at. */
function stateFromRow(row: Record<string, any> | undefined): { state: ContactState; revision: number | 'no_stream' } {
  if (!row) return { state: contactDecider.initialState, revision: 'no_stream' };
  const fields = {
    firstName: row.first_name,
    lastName: row.last_name,
    company: row.company,
    tags: row.tags,
    status: row.upserted_status as ContactStatus,
    listIds: row.list_ids,
  };
  return { state: { contactId: row.id, fields }, revision: Number(row.revision) };
}


export interface ContactDeps {
  eventStore: EventStore;
  db: Db;
  waitFor: WaitForProjection;
  personOf: PersonOf;
  /** the streams of people's contacts (default: named by keyed hash only) */
  streams?: PersonStreams;
  /** where erasing destroys a person's data keys */
  keys: Pick<KeyStore, 'erase' | 'holds'>;
  /** drops this process's cached keys of the person at once (others drop theirs when they read the erasure) */
  forget(accountId: string, person: string): void;
  /**
   * forgets copies of the person's data kept outside the log (the sandbox providers' records, webhook
   * bodies waiting to be sent, the answers Idempotency-Keys remember), once the read models have the
   * erasure; `address` (normalised) finds the copies made before sealing, and those that quote it
   */
  forgetCopies?(accountId: string, person: string, address: string): Promise<void>;
}

/** How often one erasure may find the person's messages sent meanwhile and erase again. */
const ERASURE_PASSES = 3;

export function createContactCommands(deps: ContactDeps) {
  const streams = deps.streams ?? createPersonStreams({ eventStore: deps.eventStore, personOf: deps.personOf, namedByAddress: false });
  const command = (accountId: string, email: string, input: ContactInput, addListIds: string[]): UpsertContact => {
    const { email: _raw, ...fields } = input;
    // A UUID, not a cuid: the API fixes no format for contact ids, and cuid2 hashes each id (about
    // 0.2 ms), which was half the cost of a 500-contact import.
    return { contactId: randomUUID(), accountId, email, fields, addListIds, now: new Date().toISOString() };
  };
  const outcomeOf = (events: { data: { created: boolean } }[]): Outcome => (events.length === 0 ? 'unchanged' : events[0].data.created ? 'created' : 'updated');

  /** One contact through its stream: read, decide, append with the expected revision, retry on a race. */
  async function upsertOne(accountId: string, caller: Caller, email: string, input: ContactInput, addListIds: string[]) {
    const result = await execute(contactDecider, command(accountId, email, input, addListIds), {
      eventStore: deps.eventStore,
      streamId: await streams.contact(accountId, email),
      metadata: callerMetadata(caller),
    });
    return { outcome: outcomeOf(result.events), position: result.position };
  }

  /**
   * A chunk decided from the read model and appended in one atomic appendMany, each stream with the
   * revision its row reflects. Returns the rows it did not settle: every row when the store cannot
   * append across streams or a row was stale (the store then refused the whole chunk), and the rows
   * the read model calls unchanged whose streams have moved on since (or when the store cannot say):
   * "nothing to do" is not something an expected revision can check, so those are confirmed against
   * their streams.
   */
  async function importChunk(accountId: string, caller: Caller, items: Row[], addListIds: string[], tally: (o: Outcome, p?: Position) => void): Promise<Row[]> {
    if (!deps.eventStore.appendMany) return items;
    const rows = await contactsByEmail(
      deps.db,
      accountId,
      items.map((i) => i.email),
      ['id', 'email', 'first_name', 'last_name', 'company', 'tags', 'upserted_status', 'list_ids', 'revision'],
    );
    const byEmail = new Map(rows.map((r) => [r.email as string, r]));
    const streamIds = await streams.contacts(accountId, items.map((i) => i.email));
    const unchanged: Unchanged[] = [];
    const appends: (StreamAppend & { outcome: Outcome })[] = [];
    for (const [i, item] of items.entries()) {
      const { state, revision } = stateFromRow(byEmail.get(item.email));
      const events = contactDecider.decide(command(accountId, item.email, item.input, addListIds), state);
      const streamId = streamIds[i];
      if (events.length === 0) {
        unchanged.push({ item, streamId, revision });
        continue;
      }
      const commandId = randomUUID();
      appends.push({
        streamId,
        expectedRevision: revision,
        outcome: outcomeOf(events),
        events: events.map((e, i) => ({ id: deterministicEventId(streamId, commandId, String(i)), type: e.type, data: e.data, metadata: { ...callerMetadata(caller), commandId } })),
      });
    }
    if (appends.length > 0) {
      try {
        const results = await deps.eventStore.appendMany(appends.map(({ outcome: _o, ...a }) => a));
        appends.forEach((a, i) => tally(a.outcome, results[i].position));
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError) return items;
        throw err;
      }
    }
    return confirmUnchanged(unchanged, tally);
  }

  /**
   * Of the rows the read model calls unchanged, those whose streams are still at the revision the row
   * reflects are unchanged (tallied); the others are returned, to be confirmed against their streams.
   */
  async function confirmUnchanged(unchanged: Unchanged[], tally: (o: Outcome) => void): Promise<Row[]> {
    if (unchanged.length === 0 || !deps.eventStore.streamRevisions) return unchanged.map((u) => u.item);
    const current = await deps.eventStore.streamRevisions(unchanged.map((u) => u.streamId));
    const rest: Row[] = [];
    for (const u of unchanged) {
      if (current.get(u.streamId) === u.revision) tally('unchanged');
      else rest.push(u.item);
    }
    return rest;
  }

  async function read(accountId: string, email: string) {
    const row = await contactRow(deps.db, accountId, email);
    if (!row) throw notFound(`contact ${email} not found`);
    return contactView(row);
  }

  return {
    async upsert(accountId: string, caller: Caller, input: ContactInput) {
      const email = normaliseEmail(input.email);
      const { outcome, position } = await upsertOne(accountId, caller, email, input, []);
      await deps.waitFor('contacts', position);
      return { created: outcome === 'created', contact: await read(accountId, email) };
    },

    /**
     * Bulk upsert. Idempotent: a contact whose data would not change appends nothing, so the same
     * body again reports `created: 0`. Invalid rows are listed by index and the valid ones are still
     * imported. Nothing is half-written on a crash: chunks of up to 500 contacts are appended in one
     * transaction (all or none), and a contact settled on its own is one atomic append to its
     * stream; every contact is therefore either fully recorded or not at all, and re-sending the
     * same body completes exactly the missing ones.
     */
    async import(accountId: string, caller: Caller, rows: unknown[], listId?: string) {
      if (rows.length > MAX_IMPORT) throw badRequest(`contacts: at most ${MAX_IMPORT} contacts per request (got ${rows.length})`);
      const { valid, errors } = checkImportRows(rows);
      const addListIds = listId ? [listId] : [];
      const counts = { created: 0, updated: 0, unchanged: 0 };
      let last: Position | undefined;
      const tally = (outcome: Outcome, position?: Position) => {
        counts[outcome]++;
        last = laterPosition(last, position);
      };

      const rest: Row[] = [];
      for (let i = 0; i < valid.length; i += CHUNK) {
        rest.push(...(await importChunk(accountId, caller, valid.slice(i, i + CHUNK), addListIds, tally)));
      }
      let next = 0;
      const worker = async () => {
        while (next < rest.length) {
          const item = rest[next++];
          const r = await upsertOne(accountId, caller, item.email, item.input, addListIds);
          tally(r.outcome, r.position);
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rest.length) }, worker));
      await deps.waitFor('contacts', last);
      return { total: rows.length, ...counts, ...(errors.length ? { errors } : {}) };
    },

    /**
     * Forgets a person (docs/privacy.md): records the erasure on their contact stream (read models
     * drop or null what they show of them), then destroys their data keys, so nothing sealed under
     * them opens again: not in the log, a rebuild, a replay or a dump. Idempotent; a suppression of the
     * address stays (it is held by keyed hash). The keys go after the event: a stop in between leaves
     * them to the next call, never an erasure the read models do not know.
     */
    async erase(accountId: string, caller: Caller, email: string) {
      const person = deps.personOf(email);
      const streamId = await streams.contact(accountId, normaliseEmail(email));
      // A message sent to the person while a pass runs is sealed under a key made after the pass
      // destroyed theirs, and its row is not one the pass redacted: a pass that finds such keys erases
      // again (at most three), so what was sent before the erasure answers is forgotten with the rest.
      for (let pass = 0; pass < ERASURE_PASSES; pass++) {
        const keysLeft = await deps.keys.holds(accountId, person);
        if (pass > 0 && !keysLeft) break;
        const result = await execute(contactEraser, { accountId, person, keysLeft, now: new Date().toISOString() }, {
          eventStore: deps.eventStore,
          streamId,
          metadata: callerMetadata(caller),
        });
        await deps.keys.erase(accountId, person);
        deps.forget(accountId, person);
        await Promise.all([deps.waitFor('contacts', result.position), deps.waitFor('messages', result.position), deps.waitFor('suppressions', result.position)]);
        await deps.forgetCopies?.(accountId, person, normaliseAddress(email));
      }
      return { erased: true as const };
    },

    /** One contact by address, as contacts are keyed (case of the domain, surrounding space); 404 when none. */
    get(accountId: string, email: string) {
      return read(accountId, normaliseEmail(email));
    },

    async list(accountId: string, q: { page: number; limit: number; search?: string; status?: string; tag?: string; listId?: string }) {
      const { rows, total } = await contactsPage(deps.db, accountId, q);
      return { items: rows.map(contactView), total, page: q.page, pageSize: q.limit, totalPages: Math.ceil(total / q.limit) };
    },
  };
}
export type ContactCommands = ReturnType<typeof createContactCommands>;
