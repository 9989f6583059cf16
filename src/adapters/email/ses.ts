import {
  CreateEmailIdentityCommand,
  GetEmailIdentityCommand,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
  SendEmailCommand,
  type GetEmailIdentityCommandOutput,
} from '@aws-sdk/client-sesv2';
import MailComposer from 'nodemailer/lib/mail-composer';
import { missingAwsCredentials } from '../aws-credentials.js';
import { ProviderError, type CheckStatus, type EmailProvider, type IdentityStatus, type OutgoingEmail } from '../../ports/email-provider.js';

export interface SesOptions {
  region: string;
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  configurationSetName?: string;
  /** per-request timeout (default 30 s): a hung call must end, or its worker would hold the send (its lease is renewed while it runs) */
  requestTimeoutMs?: number;
}

const RETRYABLE = new Set(['TooManyRequestsException', 'ThrottlingException', 'Throttling', 'ServiceUnavailable', 'InternalFailure', 'RequestTimeout']);

/** SDK errors to ProviderError: throttling, 5xx and network failures are worth retrying; the rest are final. */
export function toProviderError(err: unknown): ProviderError {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number }; $fault?: string };
  const status = e.$metadata?.httpStatusCode;
  const serverSide = e.$fault === 'server' || (status !== undefined && status >= 500);
  const retryable = RETRYABLE.has(e.name ?? '') || serverSide || status === undefined;
  // A 5xx, a timeout or a dropped connection may come after SES took the message; a throttled or
  // refused request (a 4xx) was not taken.
  const mayHaveSent = serverSide || status === undefined;
  return new ProviderError(`${e.name ?? 'Error'}: ${e.message ?? String(err)}`, retryable, e.name, mayHaveSent);
}

// TEMPORARY_FAILURE means SES could not look the records up this time: not a verdict, so still pending.
const check = (status: string | undefined): CheckStatus => (status === 'SUCCESS' ? 'verified' : status === 'FAILED' ? 'failed' : 'pending');

// SES message tag names and values allow only ASCII letters, digits, `_` and `-`, at most 256 each.
const SES_TAG_MAX = 256;
const sesTagText = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, SES_TAG_MAX) || '_';
/**
 * The metadata keys SES can be given a name for: the characters every key once had to be of, `.` and
 * `:` written as `_`. Any other (a space, a letter outside ASCII) would become a `_` that says nothing of
 * which key it was, or make another key's name, as would cutting a name to SES's length.
 */
const SES_NAMEABLE_KEY = /^[A-Za-z0-9_.:-]+$/;

/**
 * Our id tag, then each tag as `tag_<tag>` = `1` and each metadata entry as `meta_<key>` = value, made
 * to SES's characters (a `:` or `.` becomes `_`, in a value any other character SES refuses too). The
 * prefixes keep a sender's names apart from ours and from each other; two names that become one after
 * the change keep the first. An entry whose key SES cannot name (SES_NAMEABLE_KEY, or `meta_<key>`
 * over 256 characters) is left out: it stays on the message and in the list's filters, and Postmark
 * takes it as it is.
 */
export function sesEmailTags(messageId: string, tags: string[] = [], metadata: Record<string, string> = {}) {
  const out = new Map<string, string>([['msg_id', messageId]]);
  for (const tag of tags) {
    const name = sesTagText(`tag_${tag}`);
    if (!out.has(name)) out.set(name, '1');
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (!SES_NAMEABLE_KEY.test(key) || `meta_${key}`.length > SES_TAG_MAX) continue;
    const name = sesTagText(`meta_${key}`);
    if (!out.has(name)) out.set(name, sesTagText(value));
  }
  return [...out].map(([Name, Value]) => ({ Name, Value }));
}

/** The custom MAIL FROM subdomain we set up for a new domain: SPF alignment needs one. */
export const mailFromDomainOf = (domain: string) => `mail.${domain}`;

function toStatus(identity: string, out: GetEmailIdentityCommandOutput, region: string): IdentityStatus {
  if (identity.includes('@')) {
    const s: CheckStatus = out.VerifiedForSendingStatus ? 'verified' : 'pending';
    return { dkim: s, spf: s, mailFrom: s, dnsRecords: [] };
  }
  const dkim = check(out.DkimAttributes?.Status);
  const mailFromDomain = out.MailFromAttributes?.MailFromDomain;
  const mailFrom = check(out.MailFromAttributes?.MailFromDomainStatus);
  const dnsRecords = (out.DkimAttributes?.Tokens ?? []).map((token) => ({
    type: 'CNAME',
    name: `${token}._domainkey.${identity}`,
    value: `${token}.dkim.amazonses.com`,
  }));
  if (mailFromDomain) {
    dnsRecords.push({ type: 'MX', name: mailFromDomain, value: `10 feedback-smtp.${region}.amazonses.com` });
    dnsRecords.push({ type: 'TXT', name: mailFromDomain, value: 'v=spf1 include:amazonses.com ~all' });
  }
  // SPF is checked through the custom MAIL FROM domain's records, so it follows MAIL FROM.
  return { dkim, spf: mailFrom, mailFrom, dnsRecords };
}

/**
 * The whole message as MIME, for SES's raw content: SES's simple content has no attachments. The
 * headers of the simple path (List-Unsubscribe and the others) are written into it as they are.
 * Parts with a content id are inline (multipart/related, shown by the HTML's `cid:` references).
 */
export async function composeMime(email: OutgoingEmail): Promise<Buffer> {
  const composer = new MailComposer({
    from: email.from,
    to: email.to,
    ...(email.replyTo ? { replyTo: email.replyTo } : {}),
    subject: email.subject,
    ...(email.html ? { html: email.html } : {}),
    ...(email.text ? { text: email.text } : {}),
    headers: email.headers.map((h) => ({ key: h.name, value: h.value })),
    attachments: (email.attachments ?? []).map((a) => ({
      filename: a.filename,
      content: a.content,
      contentType: a.contentType,
      ...(a.contentId ? { cid: a.contentId, contentDisposition: 'inline' as const } : { contentDisposition: 'attachment' as const }),
    })),
  });
  return composer.compile().build();
}

/**
 * AWS SES v2 through the official SDK. The SDK's own retries are off (`maxAttempts: 1`): the send
 * worker's schedule is the one retry policy, recorded on the message stream, and an SDK retry after a
 * timed-out call that SES had in fact accepted would be an invisible second send.
 */
export function createSesEmailProvider(options: SesOptions): EmailProvider {
  const client = new SESv2Client({
    region: options.region,
    maxAttempts: 1,
    // A hung call must end well inside the send lease (5 min): past it another worker may send again.
    requestHandler: { requestTimeout: options.requestTimeoutMs ?? 30_000, connectionTimeout: 5_000, throwOnRequestTimeout: true },
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  return {
    name: 'ses',
    missingCredentials: () => missingAwsCredentials(client),
    async send(email) {
      try {
        // Raw MIME only for a message with attachments: the simple content, built by SES, stays the
        // path of every other send (no composing on the worker, the same wire format as before).
        const raw = email.attachments?.length ? await composeMime(email) : null;
        const out = await client.send(
          new SendEmailCommand({
            FromEmailAddress: email.from,
            Destination: { ToAddresses: [email.to] },
            ReplyToAddresses: email.replyTo && !raw ? [email.replyTo] : undefined,
            Content: raw ? { Raw: { Data: raw } } : {
              Simple: {
                Subject: { Data: email.subject, Charset: 'UTF-8' },
                Body: {
                  ...(email.html ? { Html: { Data: email.html, Charset: 'UTF-8' } } : {}),
                  ...(email.text ? { Text: { Data: email.text, Charset: 'UTF-8' } } : {}),
                },
                Headers: email.headers.length ? email.headers.map((h) => ({ Name: h.name, Value: h.value })) : undefined,
              },
            },
            ConfigurationSetName: options.configurationSetName,
            EmailTags: sesEmailTags(email.messageId, email.tags, email.metadata),
            ...(email.disableProviderTracking
              ? { ConfigurationOverrides: { Tracking: { OpenTrackingEnabled: 'DISABLED', ClickTrackingEnabled: 'DISABLED' } } }
              : {}),
          }),
        );
        if (!out.MessageId) throw new ProviderError('SES returned no MessageId', true);
        return { providerMessageId: out.MessageId };
      } catch (err) {
        throw err instanceof ProviderError ? err : toProviderError(err);
      }
    },
    async createIdentity(identity) {
      try {
        await client.send(new CreateEmailIdentityCommand({ EmailIdentity: identity }));
      } catch (err) {
        if ((err as { name?: string }).name !== 'AlreadyExistsException') throw toProviderError(err);
      }
      try {
        // A domain is only verified with a custom MAIL FROM (SPF runs on it): set one up unless the
        // owner already configured their own in SES.
        const current = await client.send(new GetEmailIdentityCommand({ EmailIdentity: identity }));
        if (!identity.includes('@') && !current.MailFromAttributes?.MailFromDomain) {
          await client.send(
            new PutEmailIdentityMailFromAttributesCommand({
              EmailIdentity: identity,
              MailFromDomain: mailFromDomainOf(identity),
              BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
            }),
          );
        }
      } catch (err) {
        throw toProviderError(err);
      }
      return this.getIdentityStatus(identity);
    },
    async getIdentityStatus(identity) {
      try {
        return toStatus(identity, await client.send(new GetEmailIdentityCommand({ EmailIdentity: identity })), options.region);
      } catch (err) {
        throw toProviderError(err);
      }
    },
  };
}
