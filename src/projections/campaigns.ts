import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';
import { CAMPAIGN_STREAM_PREFIX, type CampaignEvent } from '../domain/campaigns/campaign.js';
import type { Projection } from './projection.js';

type Data<T extends CampaignEvent['type']> = Extract<CampaignEvent, { type: T }>['data'];

/**
 * Campaigns as the API shows them, with their live progress: the counts are the sums of the fan-out's
 * recorded steps, so they are exact however often a step was run.
 */
export const campaignsProjection: Projection = {
  name: 'campaigns',
  version: 1,
  tables: ['campaigns'],
  streamPrefixes: [CAMPAIGN_STREAM_PREFIX],
  async setup(trx: Knex.Transaction, t: (base: string) => string) {
    await trx.schema.createTable(t('campaigns'), (tb) => {
      tb.text('id').primary();
      tb.text('account_id').notNullable();
      tb.text('name').notNullable();
      tb.text('status').notNullable();
      tb.text('template_id').notNullable();
      tb.text('from_email').notNullable();
      tb.text('from_name');
      tb.text('reply_to');
      tb.jsonb('audience').notNullable();
      tb.jsonb('variables').notNullable();
      tb.text('paused_reason');
      tb.timestamp('resume_at', { useTz: true });
      tb.timestamp('scheduled_at', { useTz: true });
      tb.timestamp('started_at', { useTz: true });
      tb.timestamp('finished_at', { useTz: true });
      tb.integer('audience_count');
      tb.integer('queued').notNullable().defaultTo(0);
      tb.integer('skipped').notNullable().defaultTo(0);
      tb.integer('unfilled').notNullable().defaultTo(0);
      tb.timestamp('created_at', { useTz: true }).notNullable();
      tb.timestamp('updated_at', { useTz: true }).notNullable();
      tb.index(['account_id', 'created_at']);
    });
    // what the campaign timers look for: scheduled ones due, cap pauses over
    await trx.raw(`CREATE INDEX ${t('campaigns')}_timers ON ${t('campaigns')} (status) WHERE status IN ('scheduled', 'paused')`);
  },
  async handle(events: RecordedEvent[], trx: Knex.Transaction, t: (base: string) => string) {
    const table = () => trx(t('campaigns'));
    for (const e of events) {
      const at = e.recordedAt;
      switch (e.type) {
        case 'CampaignCreated': {
          const d = e.data as Data<'CampaignCreated'>;
          await table()
            .insert({
              id: d.campaignId,
              account_id: d.accountId,
              name: d.name,
              status: 'draft',
              template_id: d.templateId,
              from_email: d.fromEmail,
              from_name: d.fromName,
              reply_to: d.replyTo,
              audience: JSON.stringify(d.audience),
              variables: JSON.stringify(d.variables),
              created_at: d.createdAt,
              updated_at: d.createdAt,
            })
            .onConflict('id')
            .ignore();
          break;
        }
        case 'CampaignScheduled': {
          const d = e.data as Data<'CampaignScheduled'>;
          await table().where({ id: d.campaignId }).update({ status: 'scheduled', scheduled_at: d.scheduledAt, updated_at: at });
          break;
        }
        case 'CampaignStarted': {
          const d = e.data as Data<'CampaignStarted'>;
          await table().where({ id: d.campaignId }).update({ status: 'sending', started_at: d.startedAt, updated_at: at });
          break;
        }
        case 'CampaignProgressed': {
          const d = e.data as Data<'CampaignProgressed'>;
          await table()
            .where({ id: d.campaignId })
            .update({
              queued: trx.raw('queued + ?', [d.queued]),
              skipped: trx.raw('skipped + ?', [d.skipped]),
              unfilled: trx.raw('unfilled + ?', [d.unfilled]),
              ...(d.audience !== undefined ? { audience_count: d.audience } : {}),
              updated_at: at,
            });
          break;
        }
        case 'CampaignPaused': {
          const d = e.data as Data<'CampaignPaused'>;
          await table().where({ id: d.campaignId }).update({ status: 'paused', paused_reason: d.reason, resume_at: d.resumeAt, updated_at: at });
          break;
        }
        case 'CampaignResumed': {
          const d = e.data as Data<'CampaignResumed'>;
          const resumed = { paused_reason: null, resume_at: null, updated_at: at };
          // back to its schedule; or sending, which a campaign paused before its start begins by
          await table()
            .where({ id: d.campaignId })
            .update(d.rescheduledFor ? { ...resumed, status: 'scheduled' } : { ...resumed, status: 'sending', started_at: trx.raw('coalesce(started_at, ?)', [d.resumedAt]) });
          break;
        }
        case 'CampaignSent': {
          const d = e.data as Data<'CampaignSent'>;
          await table().where({ id: d.campaignId }).update({ status: 'sent', paused_reason: null, resume_at: null, finished_at: d.finishedAt, updated_at: at });
          break;
        }
        case 'CampaignCancelled': {
          const d = e.data as Data<'CampaignCancelled'>;
          await table().where({ id: d.campaignId }).update({ status: 'cancelled', paused_reason: null, resume_at: null, finished_at: d.cancelledAt, updated_at: at });
          break;
        }
        case 'CampaignChanged': {
          const { campaignId, changes: c } = e.data as Data<'CampaignChanged'>;
          const columns = {
            name: c.name,
            template_id: c.templateId,
            from_email: c.fromEmail,
            from_name: c.fromName,
            reply_to: c.replyTo,
            audience: c.audience && JSON.stringify(c.audience),
            variables: c.variables && JSON.stringify(c.variables),
          };
          const changed = Object.fromEntries(Object.entries(columns).filter(([, value]) => value !== undefined));
          await table().where({ id: campaignId }).update({ ...changed, updated_at: at });
          break;
        }
        case 'CampaignDeleted':
          await table().where({ id: (e.data as Data<'CampaignDeleted'>).campaignId }).delete();
          break;
      }
    }
  },
};
