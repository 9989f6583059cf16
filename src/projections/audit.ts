import type { Knex } from 'knex';
import { AUDITED_EVENT_TYPES, auditEvent, auditStateKey, type AuditTargetState } from '../domain/audit/audit-entry.js';
import type { RecordedEvent } from '../ports/event-store.js';
import type { Projection } from './projection.js';
import { CONTACT_ERASED } from '../domain/contacts/contact.js';

/**
 * The audit trail (GET /api/audit): one row per admin action, newest first by `seq` (the log's order),
 * and beside it what the trail remembers of each target so a change can show its value before.
 */
export const auditProjection: Projection = {
  name: 'audit',
  // 2: suppressions named by keyed hash; erasures audited, and null the detail their person's suppressions showed
  // 3: contact upserts, campaigns, webhook tests, retries and secret readings audited
  // 4: settings changes show the provider send rate and retention; identities removed
  // 5: campaign variables and identities' DNS records in the changes
  version: 5,
  tables: ['audit_entries', 'audit_targets'],
  eventTypes: AUDITED_EVENT_TYPES,

  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('audit_entries'), (tb) => {
      tb.bigIncrements('seq').primary();
      tb.uuid('event_id').notNullable().unique();
      tb.text('account_id').notNullable();
      tb.timestamp('at', { useTz: true }).notNullable();
      tb.text('actor_type').notNullable();
      tb.text('actor_id').notNullable();
      tb.text('ip');
      tb.text('action').notNullable();
      tb.text('target_type').notNullable();
      tb.text('target_id').notNullable();
      tb.jsonb('changes').notNullable();
      tb.index(['account_id', 'seq']);
    });
    await trx.schema.createTable(t('audit_targets'), (tb) => {
      tb.text('key').primary();
      tb.text('account_id').notNullable();
      tb.jsonb('fields').notNullable();
    });
  },

  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    const keys = [...new Set(events.map(auditStateKey).filter((k): k is string => k !== null))];
    const states = new Map<string, AuditTargetState | null>();
    if (keys.length) {
      for (const row of await trx(t('audit_targets')).whereIn('key', keys)) states.set(row.key, { accountId: row.account_id, fields: row.fields });
    }
    const entries = [];
    for (const e of events) {
      const key = auditStateKey(e);
      const seen = auditEvent(e, key ? (states.get(key) ?? null) : null);
      if (!seen) continue;
      if (key && seen.state !== undefined) states.set(key, seen.state);
      const { entry } = seen;
      if (!entry) continue;
      entries.push({
        event_id: e.id,
        account_id: entry.accountId,
        at: entry.at,
        actor_type: entry.actor.type,
        actor_id: entry.actor.id,
        ip: entry.ip,
        action: entry.action,
        target_type: entry.target.type,
        target_id: entry.target.id,
        changes: JSON.stringify(entry.changes),
      });
    }
    if (entries.length) await trx(t('audit_entries')).insert(entries).onConflict('event_id').ignore();
    // as a rebuild reads those suppressions once the person's key is gone (docs/privacy.md)
    for (const e of events.filter((x) => x.type === CONTACT_ERASED)) {
      await trx(t('audit_entries'))
        .where({ account_id: e.data.accountId, target_type: 'suppression', target_id: e.data.person })
        .whereRaw(`jsonb_exists(changes, 'detail')`)
        .update({ changes: trx.raw(`jsonb_set(changes, '{detail,to}', 'null'::jsonb)`) });
    }
    const forgotten = keys.filter((k) => states.get(k) === null);
    if (forgotten.length) await trx(t('audit_targets')).whereIn('key', forgotten).delete();
    const kept = keys.flatMap((key) => {
      const state = states.get(key);
      return state ? [{ key, account_id: state.accountId, fields: JSON.stringify(state.fields) }] : [];
    });
    if (kept.length) await trx(t('audit_targets')).insert(kept).onConflict('key').merge();
  },
};
