import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import type { Projection } from './projection.js';

export const templatesProjection: Projection = {
  name: 'templates',
  version: 1,
  tables: ['templates'],
  streamPrefixes: ['template-'],
  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('templates'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable().index();
      tb.text('name').notNullable();
      tb.text('subject').notNullable();
      tb.text('html').notNullable();
      tb.text('text').notNullable();
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
    });
  },
  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    for (const e of events) {
      const d = e.data;
      if (e.type === 'TemplateSaved') {
        await trx(t('templates'))
          .insert({ id: d.id, account_id: d.accountId, name: d.name, subject: d.subject, html: d.html, text: d.text, created_at: d.savedAt, updated_at: d.savedAt })
          .onConflict('id')
          .merge(['name', 'subject', 'html', 'text', 'updated_at']);
      } else if (e.type === 'TemplateDeleted') {
        await trx(t('templates')).where({ id: d.id }).delete();
      }
    }
  },
};
