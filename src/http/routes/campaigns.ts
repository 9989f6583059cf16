import { z } from 'zod';
import type { CampaignCommands } from '../../commands/campaigns.js';
import { CAMPAIGN_STATUSES, type PauseReason } from '../../domain/campaigns/campaign.js';
import { defineRoute } from '../route.js';
import { instant, nullableEnum } from './answer-fields.js';
import { messageAggregate } from './messages.js';
import { callerOf } from './principal-helpers.js';
import { senderAddress } from './send-email.js';
import { givenInstant } from '../../domain/instant.js';
import { templateVariables } from '../../domain/templates/variables.js';
import { emailAddress } from '../../domain/email/address.js';

const audience = z
  .object({ listId: z.string().min(1).max(200).optional(), tag: z.string().min(1).max(200).optional() })
  .strict()
  .meta({
    description: "The account's contacts carrying this list id and/or tag (both when both are given); {} is every contact of the account",
    examples: [{ listId: 'newsletter', tag: 'vip' }, {}],
  });

const createBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    templateId: z.string().min(1).max(100),
    fromEmail: senderAddress,
    fromName: z.string().max(200).optional(),
    replyTo: emailAddress().max(320).optional(),
    audience,
    variables: templateVariables.optional().meta({ description: "Values for the template's placeholders; a contact's email, firstName, lastName and company win over them" }),
  })
  .strict()
  .meta({
    examples: [{ name: 'Spring sale', templateId: 'clx9tpl0000qzrm5h3k8e7f', fromEmail: 'news@acme.test', fromName: 'Acme', audience: { listId: 'newsletter' }, variables: { discount: '20%' } }],
  });

const editBody = createBody
  .partial()
  .extend({ fromName: z.string().max(200).nullable().optional(), replyTo: emailAddress().max(320).nullable().optional() })
  .strict()
  .meta({ description: 'The fields to change (null clears fromName or replyTo); the audience only until the campaign starts', examples: [{ templateId: 'clx9tpl0001qzrm5h3k8e7f', fromName: 'Acme News' }] });

const sendBody = z
  .object({ scheduledAt: givenInstant.optional().meta({ description: 'Start at this instant (absent or past: now)', examples: ['2030-01-01T09:00:00Z'] }) })
  .strict();

const campaignExample = {
  id: 'clx9cmp0000qzrm5h3k8e7f',
  name: 'Spring sale',
  status: 'sending',
  pausedReason: null,
  templateId: 'clx9tpl0000qzrm5h3k8e7f',
  fromEmail: 'news@acme.test',
  fromName: 'Acme',
  replyTo: null,
  audience: { listId: 'newsletter' },
  variables: { discount: '20%' },
  scheduledAt: null,
  createdAt: '2026-03-01T09:00:00.000Z',
  startedAt: '2026-03-01T09:00:05.000Z',
  finishedAt: null,
  progress: { audience: 12000, queued: 4500, skipped: 37, unfilledPlaceholders: 12 },
  stats: {
    total: 4500,
    status: { scheduled: 0, queued: 1200, sent: 1000, delivered: 2290, bounced: 8, complained: 2, failed: 0, cancelled: 0 },
    opens: { unique: 900, total: 1400 },
    clicks: { unique: 120, total: 180 },
  },
};

const PAUSED_REASONS = ['manual', 'daily_send_cap', 'sender_not_verified', 'template_deleted', 'template_failed'] as const satisfies readonly PauseReason[];

const campaign = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(CAMPAIGN_STATUSES),
    pausedReason: nullableEnum(PAUSED_REASONS),
    templateId: z.string(),
    fromEmail: z.string(),
    fromName: z.string().nullable(),
    replyTo: z.string().nullable(),
    audience: z.object({ listId: z.string().optional(), tag: z.string().optional() }).meta({ description: 'as given on create: {} is every contact of the account' }),
    variables: z.record(z.string(), z.unknown()),
    scheduledAt: instant.nullable(),
    createdAt: instant,
    startedAt: instant.nullable(),
    finishedAt: instant.nullable(),
    progress: z.object({
      audience: z.number().int(),
      queued: z.number().int(),
      skipped: z.number().int(),
      unfilledPlaceholders: z.number().int().meta({ description: 'messages rendered with at least one placeholder left empty' }),
    }),
    stats: messageAggregate.meta({ description: 'the answer of GET /api/messages/aggregate?campaignId=<id>' }),
  })
  .meta({ examples: [campaignExample] });

const idParams = z.object({ id: z.string().min(1).max(100) });
const notFound = { description: 'No such campaign in this account' };
const conflict = { description: 'The change makes no sense in the campaign\'s status (resume a sent campaign, send a cancelled one, pause a draft)' };

export function createCampaignRoutes(deps: { campaigns: CampaignCommands }) {
  const base = { tag: 'campaigns', auth: { kind: 'jwt' as const } };
  const stepWait = { description: 'A step of the fan-out did not end within 30 s (its worker hung); ask again after Retry-After' };
  const change = (kind: 'pause' | 'resume' | 'cancel', summary: string) =>
    defineRoute({
      ...base,
      method: 'post',
      path: `/api/campaigns/:id/${kind}`,
      summary,
      params: idParams,
      responses:
        kind === 'resume'
          ? { 200: { description: 'The campaign', schema: campaign }, 404: notFound, 409: conflict }
          : { 200: { description: 'The campaign, once the fan-out step under way (if any) has ended: nothing is queued after this answer', schema: campaign }, 404: notFound, 409: conflict, 503: stepWait },
      async handler({ principal, params, req }) {
        return { status: 200, body: await deps.campaigns.change(principal!, callerOf(principal, req), params.id, kind) };
      },
    });
  return [
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/campaigns',
      summary: 'Create a campaign (a draft): a template sent to the contacts of a list and/or tag, or to all of them',
      body: createBody,
      responses: {
        201: { description: 'The campaign, status draft', schema: campaign },
        400: { description: 'Invalid payload, unknown template, or a sender not verified for sending' },
      },
      async handler({ principal, body, req }) {
        return { status: 201, body: await deps.campaigns.create(principal!, callerOf(principal, req), body) };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/campaigns',
      summary: 'List campaigns, newest first, with progress and stats',
      responses: { 200: { description: '{items}', schema: z.object({ items: z.array(campaign) }) } },
      async handler({ principal }) {
        return { status: 200, body: { items: await deps.campaigns.list(principal!) } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/campaigns/:id',
      summary: 'Read a campaign with its live progress and stats',
      params: idParams,
      responses: { 200: { description: 'The campaign', schema: campaign }, 404: notFound },
      async handler({ principal, params }) {
        return { status: 200, body: await deps.campaigns.get(principal!, params.id) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/api/campaigns/:id/send',
      summary: 'Send a draft campaign now, or at scheduledAt',
      params: idParams,
      body: sendBody,
      responses: {
        202: { description: 'Accepted: the campaign, scheduled or sending', schema: campaign },
        400: { description: 'The template is gone or the sender is not verified for sending' },
        404: notFound,
        409: conflict,
      },
      async handler({ principal, params, body, req }) {
        return { status: 202, body: await deps.campaigns.send(principal!, callerOf(principal, req), params.id, body?.scheduledAt ?? null) };
      },
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/api/campaigns/:id',
      summary: 'Change a draft, scheduled or paused campaign: name, template, sender, variables, and its audience until it starts',
      params: idParams,
      body: editBody,
      responses: {
        200: { description: 'The campaign', schema: campaign },
        400: { description: 'Invalid payload, unknown template, or a sender not verified for sending' },
        404: notFound,
        409: { description: 'The campaign is sending, sent or cancelled, or has started and the audience was to change' },
      },
      async handler({ principal, params, body, req }) {
        return { status: 200, body: await deps.campaigns.edit(principal!, callerOf(principal, req), params.id, body ?? {}) };
      },
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/api/campaigns/:id',
      summary: 'Delete a draft campaign (one that has been sent or scheduled is cancelled instead)',
      params: idParams,
      responses: { 204: { description: 'Deleted' }, 404: notFound, 409: { description: 'Not a draft' } },
      async handler({ principal, params, req }) {
        await deps.campaigns.remove(principal!, callerOf(principal, req), params.id);
        return { status: 204 };
      },
    }),
    change('pause', 'Pause a sending or scheduled campaign: it queues nothing more until resumed'),
    change('resume', 'Resume a paused campaign where it stopped'),
    change('cancel', 'Cancel a campaign for good (messages already queued still go out)'),
  ];
}
