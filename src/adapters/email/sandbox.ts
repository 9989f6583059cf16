import { createGroupCommit } from '../../group-commit.js';
import type { Db } from '../db/knex.js';
import type { EmailProvider, IdentityStatus } from '../../ports/email-provider.js';
import { simulatedReports } from '../../domain/provider-events/sandbox-simulator.js';

const providerIdOf = (messageId: string) => `sandbox-${messageId}`;

/**
 * The sandbox email provider: records each rendered message in `sandbox_emails` and NEVER delivers it;
 * to the simulator's addresses it reports a delivery, a bounce or a complaint (sandbox-simulator.ts).
 * The default for new accounts, so a fresh install can be tried safely. A message id is recorded once:
 * a second call for it (a send in doubt sent again) leaves the first record as it was, so the outbox
 * cannot show a message sent twice; count ProviderAccepted events per message for that.
 */
export function createSandboxEmailProvider(deps: { db: Db }): EmailProvider {
  const verified = (identity: string): IdentityStatus => ({
    dkim: 'verified',
    spf: 'verified',
    mailFrom: 'verified',
    dnsRecords: identity.includes('@')
      ? []
      : [
          { type: 'CNAME', name: `sandbox._domainkey.${identity}`, value: 'sandbox.dkim.invalid' },
          { type: 'MX', name: `mail.${identity}`, value: '10 feedback-smtp.sandbox.invalid' },
          { type: 'TXT', name: `mail.${identity}`, value: 'v=spf1 include:sandbox.invalid ~all' },
        ],
  });
  // Sends of concurrent workers are recorded in one statement (a real provider's batch API, in effect);
  // attachments go in with their email, in the same transaction, or not at all.
  const inserts = createGroupCommit<{ email: Record<string, unknown>; attachments: Record<string, unknown>[] }>(
    async (items) => {
      const attachments = items.flatMap((i) => i.attachments);
      const emails = items.map((i) => i.email);
      if (attachments.length === 0) {
        await deps.db('sandbox_emails').insert(emails).onConflict('message_id').ignore();
        return;
      }
      await deps.db.transaction(async (trx) => {
        await trx('sandbox_emails').insert(emails).onConflict('message_id').ignore();
        await trx('sandbox_email_attachments').insert(attachments).onConflict(['message_id', 'position']).ignore();
      });
    },
    { maxBatch: 100 },
  );
  return {
    name: 'sandbox',
    async send(email) {
      const attachments = (email.attachments ?? []).map((a, position) => ({
        message_id: email.messageId,
        position,
        filename: a.filename,
        content_type: a.contentType,
        content_id: a.contentId,
        size: a.size,
        content: a.content,
      }));
      const row = {
        message_id: email.messageId,
        from_header: email.from,
        to_address: email.to,
        reply_to: email.replyTo ?? null,
        subject: email.subject,
        html: email.html ?? null,
        text: email.text ?? null,
        headers: JSON.stringify(email.headers),
        provider_tracking: !email.disableProviderTracking,
      };
      await inserts.add({ email: row, attachments });
      const providerMessageId = providerIdOf(email.messageId);
      return { providerMessageId, reports: simulatedReports({ messageId: email.messageId, providerMessageId, to: email.to, at: new Date() }) };
    },
    async findSent(messageId) {
      const row = await deps.db('sandbox_emails').where({ message_id: messageId }).first('message_id');
      return row ? { providerMessageId: providerIdOf(messageId) } : null;
    },
    async createIdentity(identity) {
      return verified(identity);
    },
    async getIdentityStatus(identity) {
      return verified(identity);
    },
  };
}

