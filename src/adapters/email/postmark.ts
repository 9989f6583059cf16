import { Models, ServerClient } from 'postmark';
import { ProviderError, type EmailProvider, type IdentityStatus } from '../../ports/email-provider.js';

/**
 * Postmark through the official client. Postmark's domain verification lives in its Account API, which
 * needs an account token this service is not configured with, and Postmark checks every send's From
 * against its own sender signatures and domains: identities are reported verified here (no DNS records
 * to publish through us), and a send from one Postmark does not know fails with Postmark's reason.
 */
export function createPostmarkEmailProvider(options: { serverToken: string; apiUrl?: string }): EmailProvider {
  const url = options.apiUrl ? new URL(options.apiUrl) : undefined;
  const client = new ServerClient(
    options.serverToken,
    { timeout: 60, ...(url ? { useHttps: url.protocol === 'https:', requestHost: url.host + url.pathname.replace(/\/$/, '') } : {}) },
  );
  const checkedAtSend: IdentityStatus = { dkim: 'verified', spf: 'verified', mailFrom: 'verified', dnsRecords: [] };
  return {
    name: 'postmark',
    async send(email) {
      try {
        const res = await client.sendEmail({
          From: email.from,
          To: email.to,
          ReplyTo: email.replyTo,
          Subject: email.subject,
          HtmlBody: email.html,
          TextBody: email.text,
          MessageStream: 'outbound',
          // Postmark takes one tag: the first. Our id goes last so a sender's metadata never hides it.
          ...(email.tags?.length ? { Tag: email.tags[0] } : {}),
          Metadata: { ...email.metadata, msg_id: email.messageId },
          Headers: email.headers.map((h) => ({ Name: h.name, Value: h.value })),
          // Postmark names an inline part by `cid:<id>`, the form the HTML refers to it by.
          ...(email.attachments?.length
            ? {
                Attachments: email.attachments.map((a) => ({
                  Name: a.filename,
                  Content: a.content.toString('base64'),
                  ContentType: a.contentType,
                  ContentID: a.contentId ? `cid:${a.contentId}` : null,
                })),
              }
            : {}),
          // Either the service tracks (or nothing does) and Postmark must not wrap links again, or the
          // account chose provider tracking and it is switched on whatever the server's default.
          TrackOpens: !email.disableProviderTracking,
          TrackLinks: email.disableProviderTracking ? Models.LinkTrackingOptions.None : Models.LinkTrackingOptions.HtmlAndText,
        });
        if (res.ErrorCode !== 0 || !res.MessageID) throw new ProviderError(`Postmark error ${res.ErrorCode}: ${res.Message}`, false, String(res.ErrorCode));
        return { providerMessageId: res.MessageID };
      } catch (err) {
        throw asProviderError(err);
      }
    },
    async findSent(messageId) {
      // Postmark's message search filters on one Metadata field as `metadata_<key>`.
      try {
        const found = await client.getOutboundMessages({ count: 1, offset: 0, metadata_msg_id: messageId });
        const message = found.Messages.find((m) => m.Metadata?.msg_id === messageId);
        return message ? { providerMessageId: message.MessageID } : null;
      } catch (err) {
        throw asProviderError(err);
      }
    },
    async createIdentity() {
      return checkedAtSend;
    },
    async getIdentityStatus() {
      return checkedAtSend;
    },
  };
}

function asProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = err as { statusCode?: number; code?: number; message?: string };
  const status = e.statusCode ?? 0;
  // 429 and server/network failures are transient; 401 (token) and 422 (ErrorCode 300, 406, ...) are final.
  // Only a throttled or refused request is known not to have been taken.
  const retryable = status === 429 || status >= 500 || status === 0;
  const mayHaveSent = status >= 500 || status === 0;
  return new ProviderError(`Postmark error${e.code ? ` ${e.code}` : ''}: ${e.message ?? String(err)}`, retryable, e.code ? String(e.code) : undefined, mayHaveSent);
}
