import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { CONTACT_STREAM_PREFIX } from '../domain/contacts/contact.js';
import { SUPPRESSION_STREAM_PREFIX, type SuppressionReason } from '../domain/suppression/suppression.js';
import type { Projection } from './projection.js';

const STATUS_OF: Record<SuppressionReason, string> = {
  bounced: 'bounced',
  complained: 'complained',
  unsubscribed: 'unsubscribed',
  manual: 'suppressed',
  sms_optout: 'suppressed',
};

/**
 * Contacts with their effective status: a suppression of the address shows as the contact's status
 * and wins over whatever status an upsert sent (an upsert never lifts a suppression); lifting the
 * suppression brings back the upserted status.
 */
export const contactsProjection: Projection = {
  name: 'contacts',
  version: 1,
  tables: ['contacts', 'contact_suppressions'],
  streamPrefixes: [CONTACT_STREAM_PREFIX, SUPPRESSION_STREAM_PREFIX],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await trx.schema.createTable(t('contacts'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('email').notNullable();
      tb.text('first_name');
      tb.text('last_name');
      tb.text('company');
      tb.specificType('tags', 'text[]').notNullable();
      tb.text('status').notNullable();
      tb.text('upserted_status').notNullable();
      tb.specificType('list_ids', 'text[]').notNullable();
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
      tb.unique(['account_id', 'email']);
      tb.index(['account_id', 'created_at']);
    });
    await trx.raw(
      `CREATE INDEX ${t('contacts')}_search ON ${t('contacts')} USING gin ((email || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(company, '')) gin_trgm_ops)`,
    );
    await trx.raw(`CREATE INDEX ${t('contacts')}_tags ON ${t('contacts')} USING gin (tags)`);
    await trx.schema.createTable(t('contact_suppressions'), (tb) => {
      tb.text('account_id').notNullable();
      tb.text('email').notNullable();
      tb.text('reason').notNullable();
      tb.primary(['account_id', 'email']);
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    for (const e of events) {
      const d = e.data;
      if (e.type === 'ContactUpserted') {
        const suppression = await trx(t('contact_suppressions')).where({ account_id: d.accountId, email: d.email }).first('reason');
        const row = {
          id: d.contactId,
          account_id: d.accountId,
          email: d.email,
          first_name: d.fields.firstName,
          last_name: d.fields.lastName,
          company: d.fields.company,
          tags: d.fields.tags,
          upserted_status: d.fields.status,
          status: suppression ? STATUS_OF[suppression.reason as SuppressionReason] : d.fields.status,
          list_ids: d.fields.listIds,
          updated_at: d.at,
        };
        await trx(t('contacts'))
          .insert({ ...row, created_at: d.at })
          .onConflict('id')
          .merge(Object.keys(row).filter((k) => k !== 'id'));
      } else if (e.type === 'AddressSuppressed' && d.kind === 'email') {
        await trx(t('contact_suppressions')).insert({ account_id: d.accountId, email: d.value, reason: d.reason }).onConflict(['account_id', 'email']).merge();
        await trx(t('contacts')).where({ account_id: d.accountId, email: d.value }).update({ status: STATUS_OF[d.reason as SuppressionReason] });
      } else if (e.type === 'SuppressionLifted' && d.kind === 'email') {
        await trx(t('contact_suppressions')).where({ account_id: d.accountId, email: d.value }).delete();
        await trx(t('contacts')).where({ account_id: d.accountId, email: d.value }).update({ status: trx.ref('upserted_status') });
      }
    }
  },
};
