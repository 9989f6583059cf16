import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { SUPPRESSION_STREAM_PREFIX } from '../domain/suppression/suppression.js';
import { CONTACT_ERASED, CONTACT_STREAM_PREFIX } from '../domain/contacts/contact.js';
import type { Projection } from './projection.js';
import { personOfEvent } from '../domain/privacy/personal-data.js';
import { analyzeAfterGrowth } from './statistics.js';

/**
 * The account-wide suppression list the send path checks, keyed by the address's keyed hash: an
 * erased person's entry loses its address (and detail) but keeps holding the hash, so a later send to
 * the address is still refused.
 */
export const suppressionsProjection: Projection = {
  name: 'suppressions',
  // 2: keyed by person hash, erasures redact
  version: 2,
  tables: ['suppressions'],
  // contact streams for their erasures only: an import of contacts is not a run of empty batches here
  streamPrefixes: [SUPPRESSION_STREAM_PREFIX, CONTACT_STREAM_PREFIX],
  eventTypes: ['AddressSuppressed', 'SuppressionLifted', CONTACT_ERASED],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('suppressions'), (tb) => {
      tb.text('account_id').notNullable();
      tb.text('person').notNullable();
      tb.text('value');
      tb.text('kind').notNullable();
      tb.text('reason').notNullable();
      tb.text('source').notNullable();
      tb.text('message_id');
      tb.text('campaign_id');
      tb.text('detail');
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.primary(['account_id', 'person']);
      tb.index(['account_id', 'created_at']);
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    for (const e of events) {
      const d = e.data;
      if (e.type === 'AddressSuppressed') {
        await trx(t('suppressions'))
          .insert({
            account_id: d.accountId,
            person: personOfEvent(e, d.value),
            value: d.value,
            kind: d.kind,
            reason: d.reason,
            source: d.source,
            message_id: d.messageId,
            campaign_id: d.campaignId,
            detail: d.detail,
            created_at: d.occurredAt,
          })
          .onConflict(['account_id', 'person'])
          .merge();
      } else if (e.type === 'SuppressionLifted') {
        await trx(t('suppressions')).where({ account_id: d.accountId, person: personOfEvent(e, d.value) }).delete();
      } else if (e.type === CONTACT_ERASED) {
        await trx(t('suppressions')).where({ account_id: d.accountId, person: d.person }).update({ value: null, detail: null });
      }
    }
    await analyzeAfterGrowth(trx, t('suppressions'), events.filter((e) => e.type === 'AddressSuppressed').length);
  },
};
