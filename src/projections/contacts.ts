import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { CONTACT_ERASED, CONTACT_STREAM_PREFIX, type ContactUpserted } from '../domain/contacts/contact.js';
import { personOfEvent } from '../domain/privacy/personal-data.js';
import { SUPPRESSION_STREAM_PREFIX, type SuppressionReason } from '../domain/suppression/suppression.js';
import { insertRows } from './bulk-writes.js';
import type { Projection } from './projection.js';
import { analyzeAfterGrowth } from './statistics.js';

const STATUS_OF: Record<SuppressionReason, string> = {
  bounced: 'bounced',
  complained: 'complained',
  unsubscribed: 'unsubscribed',
  manual: 'suppressed',
  sms_optout: 'suppressed',
};

type Upsert = RecordedEvent<ContactUpserted['data']>;

/**
 * Writes a run of consecutive ContactUpserted events with two statements instead of two per event
 * (an import of 500 contacts arrives as one run). Only the last event of a contact in the run is
 * written, with the first one's time as createdAt for a row that did not exist yet.
 */
async function writeUpserts(run: Upsert[], trx: Knex.Transaction, t: (base: string) => string) {
  const latest = new Map<string, { event: Upsert; firstAt: string }>();
  for (const e of run) {
    const prior = latest.get(e.data.contactId);
    latest.set(e.data.contactId, { event: e, firstAt: prior?.firstAt ?? e.data.at });
  }
  const items = [...latest.values()];
  const suppressions = await trx(t('contact_suppressions'))
    .whereIn(
      ['account_id', 'person'],
      items.map(({ event }) => [event.data.accountId, personOfEvent(event, event.data.email)]),
    )
    .select('account_id', 'person', 'reason');
  const reasonOf = new Map(suppressions.map((s) => [`${s.account_id}\n${s.person}`, s.reason as SuppressionReason]));
  const rows = items.map(({ event, firstAt }) => {
    const { data: d, revision } = event;
    const person = personOfEvent(event, d.email);
    const reason = reasonOf.get(`${d.accountId}\n${person}`);
    return {
      id: d.contactId,
      account_id: d.accountId,
      email: d.email,
      person,
      first_name: d.fields.firstName,
      last_name: d.fields.lastName,
      company: d.fields.company,
      tags: d.fields.tags,
      upserted_status: d.fields.status,
      status: reason ? STATUS_OF[reason] : d.fields.status,
      list_ids: d.fields.listIds,
      revision,
      created_at: firstAt,
      updated_at: d.at,
    };
  });
  await insertRows(trx, t('contacts'), rows, { target: ['account_id', 'person'], update: Object.keys(rows[0]).filter((k) => k !== 'created_at') });
}

/**
 * Contacts with their effective status: a suppression of the address shows as the contact's status
 * and wins over whatever status an upsert sent (an upsert never lifts a suppression); lifting the
 * suppression brings back the upserted status. `revision` is the contact stream's revision the row
 * reflects, so a bulk import can decide from the row and append with that expected revision (the
 * store refuses it if the row was stale).
 */
export const contactsProjection: Projection = {
  name: 'contacts',
  // 3: keyed by person hash too; an erased person's contact is dropped. 4: a status a suppression or
  // its lift changes moves updatedAt
  version: 4,
  tables: ['contacts', 'contact_suppressions'],
  streamPrefixes: [CONTACT_STREAM_PREFIX, SUPPRESSION_STREAM_PREFIX],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await trx.schema.createTable(t('contacts'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('email').notNullable();
      tb.text('person').notNullable();
      tb.text('first_name');
      tb.text('last_name');
      tb.text('company');
      tb.specificType('tags', 'text[]').notNullable();
      tb.text('status').notNullable();
      tb.text('upserted_status').notNullable();
      tb.specificType('list_ids', 'text[]').notNullable();
      tb.integer('revision').notNullable();
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
      // One row a person: a contact first recorded on a stream named by its address (before streams
      // were named by keyed hash) continues on the hashed stream, under the id its first upsert there gives.
      tb.unique(['account_id', 'person']);
      tb.index(['account_id', 'email']);
      tb.index(['account_id', 'created_at']);
      // a campaign to all contacts walks them in id order; live generations made before it got it from migration 035
      tb.index(['account_id', 'id'], `${t('contacts')}_audience`);
      // a campaign's late walk goes through contacts changed since its fan-out began; live generations made before it got it from migration 036
      tb.index(['account_id', 'updated_at', 'id'], `${t('contacts')}_changed`);
    });
    await trx.raw(
      `CREATE INDEX ${t('contacts')}_search ON ${t('contacts')} USING gin ((email || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(company, '')) gin_trgm_ops)`,
    );
    await trx.raw(`CREATE INDEX ${t('contacts')}_tags ON ${t('contacts')} USING gin (tags)`);
    // the list's `listId` filter; live generations made before it got it from migration 030
    await trx.raw(`CREATE INDEX ${t('contacts')}_lists ON ${t('contacts')} USING gin (list_ids)`);
    await trx.schema.createTable(t('contact_suppressions'), (tb) => {
      tb.text('account_id').notNullable();
      tb.text('person').notNullable();
      tb.text('reason').notNullable();
      tb.primary(['account_id', 'person']);
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    let run: Upsert[] = [];
    const flush = async () => {
      if (run.length) await writeUpserts(run, trx, t);
      run = [];
    };
    for (const e of events) {
      const d = e.data;
      if (e.type === 'ContactUpserted') {
        // an erased person's upserts read without their fields: the erasure after them drops the row
        if (d.email !== null && d.fields !== null) run.push(e);
        continue;
      }
      // Suppression events are applied in log order between runs of upserts.
      await flush();
      const person = personOfEvent(e, d.value);
      // A status the contact shows that changes here changes its updatedAt, so a caller following
      // contacts by it sees unsubscribes and bounces too.
      const changedAt = trx.raw('GREATEST(updated_at, ?::timestamptz)', [e.recordedAt]);
      if (e.type === 'AddressSuppressed' && d.kind === 'email') {
        const status = STATUS_OF[d.reason as SuppressionReason];
        await trx(t('contact_suppressions')).insert({ account_id: d.accountId, person, reason: d.reason }).onConflict(['account_id', 'person']).merge();
        await trx(t('contacts')).where({ account_id: d.accountId, person }).whereNot({ status }).update({ status, updated_at: changedAt });
      } else if (e.type === 'SuppressionLifted' && d.kind === 'email') {
        await trx(t('contact_suppressions')).where({ account_id: d.accountId, person }).delete();
        await trx(t('contacts')).where({ account_id: d.accountId, person }).whereRaw('status <> upserted_status').update({ status: trx.ref('upserted_status'), updated_at: changedAt });
      } else if (e.type === CONTACT_ERASED) {
        await trx(t('contacts')).where({ account_id: d.accountId, person: d.person }).delete();
      }
    }
    await flush();
    // A campaign walks its audience in id order a page at a time; planned without statistics (a list
    // just imported), that walk read every contact of the account for each page.
    await analyzeAfterGrowth(trx, t('contacts'), events.filter((e) => e.type === 'ContactUpserted' && e.data.created).length);
  },
};
