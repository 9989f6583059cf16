import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import type { SendCounters } from '../adapters/db/send-counters.js';
import { emailDomain, formatFromHeader, normaliseEmail } from '../domain/email/address.js';
import { renderTemplate } from '../domain/email/render.js';
import { rewriteForTracking } from '../domain/email/tracking.js';
import { createUnsubscribeToken } from '../domain/email/unsubscribe-token.js';
import { badRequest, notFound } from '../domain/errors.js';
import { createGroupCommit } from '../group-commit.js';
import { messageStream, type EmailQueued } from '../domain/messages/events.js';
import { messageDecider } from '../domain/messages/message.js';
import type { Principal } from '../http/principal.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';
import type { IdentityCommands } from './identities.js';

export interface SendEmailInput {
  to: string;
  fromEmail: string;
  fromName?: string;
  replyTo?: string;
  subject?: string;
  html?: string;
  text?: string;
  templateId?: string;
  variables?: Record<string, unknown>;
  unsubscribeUrl?: string;
}

interface SendCheck {
  accountId: string;
  to: string;
  domain: string;
  sender: string;
}

interface SendCheckRow {
  daily_send_cap: number;
  email_provider: EmailQueued['data']['provider'];
  tracking: EmailQueued['data']['tracking'];
  suppressed: boolean;
  verified_sender: boolean;
}

export interface SendEmailDeps {
  eventStore: EventStore;
  db: Db;
  identities: IdentityCommands;
  counters: SendCounters;
  baseUrl: () => string;
  linkSecret: string;
}

/**
 * SendEmail: the checks of SPEC.md §4 in the order the issue gives (suppressed, unverified sender,
 * per-key cap, account cap), then `EmailQueued` on a new message stream. The provider is called later
 * by the send process manager, so the caller never waits for it.
 */
export function createSendEmail(deps: SendEmailDeps) {
  // The hot path: the account, the suppression check and the sender check in one round trip, and the
  // checks of sends arriving together in one statement. A send never joins a check already running,
  // so a suppression recorded before the send was asked is always seen.
  const sendChecks = createGroupCommit<SendCheck, SendCheckRow | undefined>(async (items) => {
    const { rows } = await deps.db.raw(
      `SELECT r.i, a.daily_send_cap, a.email_provider, a.tracking,
         EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = a.id AND s.value = r.to_address) AS suppressed,
         EXISTS (SELECT 1 FROM identities i WHERE i.account_id = a.id AND i.verified
                   AND ((i.kind = 'domain' AND i.value = r.domain) OR (i.kind = 'email' AND i.value = r.sender))) AS verified_sender
       FROM unnest(?::text[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS r (account_id, to_address, domain, sender, i)
       JOIN accounts a ON a.id = r.account_id`,
      [items.map((c) => c.accountId), items.map((c) => c.to), items.map((c) => c.domain), items.map((c) => c.sender)],
    );
    const results: (SendCheckRow | undefined)[] = items.map(() => undefined);
    for (const row of rows) results[Number(row.i) - 1] = row;
    return results;
  });

  return async function sendEmail(principal: Principal, input: SendEmailInput): Promise<{ queued: true; messageLogId: string }> {
    const accountId = principal.accountId;
    const to = normaliseEmail(input.to);
    const sender = normaliseEmail(input.fromEmail);
    const account = await sendChecks.add({ accountId, to, domain: emailDomain(sender), sender });
    if (!account) throw notFound('account not found');
    let fields = { subject: input.subject, html: input.html, text: input.text };
    if (input.templateId) {
      const template = await deps.db('templates').where({ id: input.templateId, account_id: accountId }).first('subject', 'html', 'text');
      if (!template) throw badRequest(`templateId ${input.templateId} not found`);
      fields = { subject: input.subject ?? template.subject, html: input.html ?? template.html, text: input.text ?? template.text };
    }
    const rendered = renderTemplate(
      { subject: fields.subject ?? '', html: fields.html ?? '', text: fields.text ?? '' },
      input.variables ?? {},
    );

    if (account.suppressed) throw badRequest(`${input.to} is suppressed`);
    // (the same rule as identities.isVerifiedSender, inlined into the query above)
    if (!account.verified_sender) throw badRequest(`${input.fromEmail} is not verified for sending`);

    const reservation = await deps.counters.reserve({
      accountId,
      accountCap: account.daily_send_cap,
      apiKeyId: principal.kind === 'apiKey' ? principal.apiKeyId : null,
      keyLimit: principal.kind === 'apiKey' ? principal.dailyLimit : null,
    });

    const messageId = createId();
    // Anything failing from here on (tracking rewrite, append) gives the cap slot back.
    try {
      const baseUrl = deps.baseUrl();
      const headers: EmailQueued['data']['headers'] = [];
      const serviceUnsubscribe = `${baseUrl}/u/${createUnsubscribeToken(deps.linkSecret, messageId)}`;
      if (input.unsubscribeUrl) {
        headers.push({ name: 'List-Unsubscribe', value: `<${serviceUnsubscribe}>` });
        headers.push({ name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' });
      }
      let html = rendered.html || null;
      if (html && account.tracking === 'service') {
        html = rewriteForTracking(html, {
          baseUrl,
          messageId,
          secret: deps.linkSecret,
          unsubscribeUrls: [serviceUnsubscribe, ...(input.unsubscribeUrl ? [input.unsubscribeUrl] : [])],
        });
      }

      const data: EmailQueued['data'] = {
        messageId,
        accountId,
        apiKeyId: principal.kind === 'apiKey' ? principal.apiKeyId : null,
        campaignId: null,
        templateId: input.templateId ?? null,
        unsubscribeUrl: input.unsubscribeUrl ?? null,
        tracking: account.tracking,
        provider: account.email_provider,
        from: formatFromHeader(input.fromName, input.fromEmail),
        fromEmail: input.fromEmail,
        fromName: input.fromName ?? null,
        to: input.to,
        replyTo: input.replyTo ?? null,
        subject: rendered.subject,
        html,
        text: rendered.text || null,
        headers,
        queuedAt: new Date().toISOString(),
      };
      // A brand-new stream: nothing to read first (one round trip fewer on the hot path).
      const actor = principal.kind === 'apiKey' ? `apikey:${principal.apiKeyId}` : `user:${principal.userId}`;
      await execute(messageDecider, { kind: 'queueEmail', data }, {
        eventStore: deps.eventStore,
        streamId: messageStream(messageId),
        commandId: `queue-${messageId}`,
        metadata: { actor },
        history: [],
      });
    } catch (err) {
      await reservation.release();
      throw err;
    }
    return { queued: true, messageLogId: messageId };
  };
}
