import type { Db } from '../adapters/db/knex.js';
import { notFound } from '../domain/errors.js';

const iso = (v: unknown) => new Date(v as string).toISOString();

/**
 * What the sandbox providers recorded (their outboxes, written by src/adapters/email/sandbox.ts and
 * the sandbox SMS provider), newest first, limited to one account's messages through the message log.
 */
export function createSandboxOutbox(deps: { db: Db }) {
  const { db } = deps;
  const ofAccount = (table: string, accountId: string) =>
    db(`${table} as s`).join('messages as m', 'm.id', 's.message_id').where('m.account_id', accountId);

  return {
    async emails(accountId: string, limit: number) {
      const rows = await ofAccount('sandbox_emails', accountId)
        .select('s.message_id', 's.from_header', 's.to_address', 's.reply_to', 's.subject', 's.html', 's.text', 's.headers', 's.created_at')
        .orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.message_id', order: 'desc' }])
        .limit(limit);
      const attachments = rows.length
        ? await db('sandbox_email_attachments')
            .whereIn('message_id', rows.map((r) => r.message_id))
            .select('message_id', 'position', 'filename', 'content_type', 'content_id', 'size')
            .orderBy(['message_id', 'position'])
        : [];
      return {
        items: rows.map((r) => ({
          messageId: r.message_id,
          from: r.from_header,
          to: r.to_address,
          replyTo: r.reply_to,
          subject: r.subject,
          html: r.html,
          text: r.text,
          headers: r.headers,
          createdAt: iso(r.created_at),
          attachments: attachments
            .filter((a) => a.message_id === r.message_id)
            .map((a) => ({ position: a.position, filename: a.filename, contentType: a.content_type, contentId: a.content_id, size: a.size })),
        })),
      };
    },

    async sms(accountId: string, limit: number) {
      const rows = await ofAccount('sandbox_sms', accountId)
        .select('s.message_id', 's.to_number', 's.from_number', 's.body', 's.created_at')
        .orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.message_id', order: 'desc' }])
        .limit(limit);
      return { items: rows.map((r) => ({ messageId: r.message_id, to: r.to_number, from: r.from_number, body: r.body, createdAt: iso(r.created_at) })) };
    },

    async attachment(accountId: string, messageId: string, position: number) {
      const row = await ofAccount('sandbox_email_attachments', accountId)
        .where({ 's.message_id': messageId, 's.position': position })
        .first('s.filename', 's.content_type', 's.content');
      if (!row) throw notFound('attachment not found');
      return { filename: row.filename as string, contentType: row.content_type as string, content: row.content as Buffer };
    },
  };
}
export type SandboxOutbox = ReturnType<typeof createSandboxOutbox>;
