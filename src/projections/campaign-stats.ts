import type { Knex } from 'knex';
import type { MessageStatus } from '../domain/messages/message.js';

/** What a message row holds that a campaign's stats count. */
export interface CampaignMessage {
  campaign_id: string | null;
  status: MessageStatus;
  opens: number;
  clicks: number;
}

/** One campaign's count of messages in one status, and their opens and clicks (`opened`: how many have at least one). */
interface StatsRow {
  campaign_id: string;
  status: MessageStatus;
  messages: number;
  opened: number;
  opens: number;
  clicked: number;
  clicks: number;
}

export const CAMPAIGN_STATS_TABLE = 'campaign_stats';

export async function setupCampaignStats(trx: Knex.Transaction, t: (base: string) => string) {
  await trx.schema.createTable(t(CAMPAIGN_STATS_TABLE), (tb) => {
    tb.text('campaign_id').notNullable();
    tb.text('status').notNullable();
    for (const n of ['messages', 'opened', 'opens', 'clicked', 'clicks']) tb.bigInteger(n).notNullable();
    tb.primary(['campaign_id', 'status']);
  });
}

/**
 * A campaign's stats kept as its messages change, so that reading them (every 2 s on the dashboard,
 * for every campaign of the list) reads a handful of rows, not a count over the campaign's messages.
 * The messages projection takes off what each stored row it reads counted (`before`, ahead of any
 * change) and puts on what every row of the batch counts as it leaves it (`after`, the stored rows
 * among them): the net difference is written, so a message whose whole life falls in one batch
 * writes only where it ended, and a row the batch left as it was writes nothing.
 */
export function campaignStatsChange() {
  const deltas = new Map<string, StatsRow>();
  const add = (m: CampaignMessage, sign: 1 | -1) => {
    const key = `${m.campaign_id}\u0000${m.status}`;
    const row = deltas.get(key) ?? { campaign_id: m.campaign_id!, status: m.status, messages: 0, opened: 0, opens: 0, clicked: 0, clicks: 0 };
    row.messages += sign;
    row.opened += sign * Number(m.opens > 0);
    row.opens += sign * m.opens;
    row.clicked += sign * Number(m.clicks > 0);
    row.clicks += sign * m.clicks;
    deltas.set(key, row);
  };
  return {
    /** A stored row as read, before the batch changes it. */
    before(row: CampaignMessage) {
      if (row.campaign_id) add(row, -1);
    },
    /** A row as the batch leaves it. */
    after(row: CampaignMessage) {
      if (row.campaign_id) add(row, 1);
    },
    async write(trx: Knex.Transaction, t: (base: string) => string) {
      const net = [...deltas.values()].filter((d) => d.messages !== 0 || d.opened !== 0 || d.opens !== 0 || d.clicked !== 0 || d.clicks !== 0);
      if (net.length === 0) return;
      const table = t(CAMPAIGN_STATS_TABLE);
      await trx.raw(
        `INSERT INTO ?? AS s SELECT * FROM json_populate_recordset(NULL::??, ?::json)
         ON CONFLICT (campaign_id, status) DO UPDATE SET messages = s.messages + excluded.messages, opened = s.opened + excluded.opened,
           opens = s.opens + excluded.opens, clicked = s.clicked + excluded.clicked, clicks = s.clicks + excluded.clicks`,
        [table, table, JSON.stringify(net)],
      );
    },
  };
}
