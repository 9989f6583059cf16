import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import type { CampaignTurns } from '../adapters/db/campaign-turns.js';
import { campaignDecider, campaignStream, type CampaignCommand, type CampaignDefinition } from '../domain/campaigns/campaign.js';
import { sendingChecks, type SendingChecks } from '../domain/campaigns/sending-checks.js';
import { fold } from '../domain/decider.js';
import { normaliseEmail } from '../domain/email/address.js';
import { badRequest, notFound } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { EventStore, RecordedEvent } from '../ports/event-store.js';
import { callerMetadata, type Caller } from './caller.js';
import { execute } from './execute.js';
import type { Aggregate, MessageQueries } from '../read-models/messages.js';
import type { WaitForProjection } from './read-your-writes.js';
import { campaignRow, campaignsOf } from '../read-models/campaigns.js';
import { isVerifiedSender } from '../read-models/identities.js';
import { templateRow } from '../read-models/templates.js';

const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);

export type CampaignInput = Omit<CampaignDefinition, 'fromName' | 'replyTo' | 'variables'> & {
  fromName?: string;
  replyTo?: string;
  variables?: Record<string, unknown>;
};

/** A campaign as the API shows it; `stats` is the messages aggregate of its messages. */
function campaignView(row: Record<string, any>, stats: Aggregate) {
  const queued = row.queued as number;
  const skipped = row.skipped as number;
  // Contacts added to the audience while it was sending are reached too: the count only grows.
  const reached = queued + skipped;
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    pausedReason: row.paused_reason,
    templateId: row.template_id,
    fromEmail: row.from_email,
    fromName: row.from_name,
    replyTo: row.reply_to,
    audience: row.audience,
    variables: row.variables,
    scheduledAt: iso(row.scheduled_at),
    createdAt: iso(row.created_at),
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    progress: {
      audience: row.status === 'sent' ? reached : Math.max(row.audience_count ?? 0, reached),
      queued,
      skipped,
      unfilledPlaceholders: row.unfilled,
    },
    stats,
  };
}

export function createCampaignCommands(deps: {
  db: Db;
  eventStore: EventStore;
  waitFor: WaitForProjection;
  campaignStats: MessageQueries['campaignStats'];
  /** a pause or cancel waits for the fan-out's step running */
  turns: CampaignTurns;
  clock?: () => Date;
}) {
  const now = () => (deps.clock ?? (() => new Date()))().toISOString();

  async function views(principal: Principal, rows: Record<string, any>[]) {
    const stats = await deps.campaignStats(principal, rows.map((row) => row.id));
    return rows.map((row) => campaignView(row, stats.get(row.id)!));
  }
  async function get(principal: Principal, id: string) {
    const row = await campaignRow(deps.db, principal.accountId, id);
    if (!row) throw notFound(`campaign ${id} not found`);
    return (await views(principal, [row]))[0];
  }
  async function run(id: string, caller: Caller, command: CampaignCommand, history?: RecordedEvent[]) {
    const result = await execute(campaignDecider, command, { eventStore: deps.eventStore, streamId: campaignStream(id), metadata: callerMetadata(caller), history });
    await deps.waitFor('campaigns', result.position);
    return result;
  }

  /** The checks a send of the same template from the same sender makes, with the same words. */
  async function checkSendable(accountId: string, { templateId, fromEmail }: SendingChecks) {
    if (templateId !== undefined && !(await templateRow(deps.db, accountId, templateId, ['id']))) throw badRequest(`templateId ${templateId} not found`);
    if (fromEmail !== undefined && !(await isVerifiedSender(deps.db, accountId, normaliseEmail(fromEmail)))) throw badRequest(`${fromEmail} is not verified for sending`);
  }

  /**
   * A send or an edit: decided on the campaign first (a change its status refuses is that 409, whatever
   * its template or sender), then what the decision would send from is checked (sendingChecks), then
   * it is recorded, decided on the same history.
   */
  async function checkedRun(principal: Principal, caller: Caller, id: string, command: CampaignCommand) {
    const history = await deps.eventStore.readStream(campaignStream(id));
    const state = fold(campaignDecider, history);
    await checkSendable(principal.accountId, sendingChecks(state, campaignDecider.decide(command, state)));
    await run(id, caller, command, history);
  }

  return {
    get,
    async list(principal: Principal) {
      return views(principal, await campaignsOf(deps.db, principal.accountId));
    },
    async create(principal: Principal, caller: Caller, input: CampaignInput) {
      await checkSendable(principal.accountId, input);
      const id = createId();
      const definition: CampaignDefinition = {
        name: input.name,
        templateId: input.templateId,
        fromEmail: input.fromEmail,
        fromName: input.fromName ?? null,
        replyTo: input.replyTo ?? null,
        audience: input.audience,
        variables: input.variables ?? {},
      };
      await run(id, caller, { kind: 'create', campaignId: id, accountId: principal.accountId, createdBy: caller.actor, definition, now: now() });
      return get(principal, id);
    },
    async send(principal: Principal, caller: Caller, id: string, scheduledAt: string | null) {
      if (!(await campaignRow(deps.db, principal.accountId, id, ['id']))) throw notFound(`campaign ${id} not found`);
      await checkedRun(principal, caller, id, { kind: 'send', accountId: principal.accountId, scheduledAt: scheduledAt && new Date(scheduledAt).toISOString(), now: now() });
      return get(principal, id);
    },
    /** A draft, scheduled or paused campaign's definition; a new template or sender is checked as on create. */
    async edit(principal: Principal, caller: Caller, id: string, changes: Partial<CampaignDefinition>) {
      if (!(await campaignRow(deps.db, principal.accountId, id, ['id']))) throw notFound(`campaign ${id} not found`);
      await checkedRun(principal, caller, id, { kind: 'edit', accountId: principal.accountId, changes, now: now() });
      return get(principal, id);
    },
    /** A draft thrown away (a campaign that has sent anything is cancelled instead). */
    async remove(principal: Principal, caller: Caller, id: string): Promise<void> {
      if (!(await campaignRow(deps.db, principal.accountId, id, ['id']))) throw notFound(`campaign ${id} not found`);
      await run(id, caller, { kind: 'delete', accountId: principal.accountId, now: now() });
    },
    async change(principal: Principal, caller: Caller, id: string, kind: 'pause' | 'resume' | 'cancel') {
      const change = () => run(id, caller, { kind, accountId: principal.accountId, now: now() } as CampaignCommand);
      // after the fan-out's step running now, if any: "paused" answered means nothing more is queued
      await (kind === 'resume' ? change() : deps.turns.command(id, change));
      return get(principal, id);
    },
  };
}
export type CampaignCommands = ReturnType<typeof createCampaignCommands>;
