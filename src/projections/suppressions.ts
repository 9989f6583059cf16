import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { SUPPRESSION_STREAM_PREFIX } from '../domain/suppression/suppression.js';
import type { Projection } from './projection.js';
import { analyzeAfterGrowth } from './statistics.js';

/** The account-wide suppression list the send path checks. */
export const suppressionsProjection: Projection = {
  name: 'suppressions',
  version: 1,
  tables: ['suppressions'],
  streamPrefixes: [SUPPRESSION_STREAM_PREFIX],

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('suppressions'), (tb) => {
      tb.text('account_id').notNullable();
      tb.text('value').notNullable();
      tb.text('kind').notNullable();
      tb.text('reason').notNullable();
      tb.text('source').notNullable();
      tb.text('message_id');
      tb.text('campaign_id');
      tb.text('detail');
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.primary(['account_id', 'value']);
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
            value: d.value,
            kind: d.kind,
            reason: d.reason,
            source: d.source,
            message_id: d.messageId,
            campaign_id: d.campaignId,
            detail: d.detail,
            created_at: d.occurredAt,
          })
          .onConflict(['account_id', 'value'])
          .merge();
      } else if (e.type === 'SuppressionLifted') {
        await trx(t('suppressions')).where({ account_id: d.accountId, value: d.value }).delete();
      }
    }
    await analyzeAfterGrowth(trx, t('suppressions'), events.filter((e) => e.type === 'AddressSuppressed').length);
  },
};
