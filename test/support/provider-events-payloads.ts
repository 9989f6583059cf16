/**
 * Provider event bodies as SES (through SNS) and Postmark send them, written from the providers'
 * documentation on their own (not built with src), so a parser mistake cannot be mirrored by its tests' inputs.
 */

export type SesKind = 'Delivery' | 'Bounce' | 'Complaint' | 'Open' | 'Click' | 'Send';

export interface SesEventOptions {
  /** our message id, echoed back as the `msg_id` tag; omitted → the event names only the SES id */
  msgId?: string;
  /** SES's MessageId (`mail.messageId`) */
  sesMessageId: string;
  recipients?: string[];
  /** configuration-set events carry `eventType`, identity notifications `notificationType` */
  style?: 'eventType' | 'notificationType';
  bounceType?: 'Permanent' | 'Transient' | 'Undetermined';
  link?: string;
  timestamp?: string;
}

/** The JSON an SNS Notification's `Message` carries for one SES event. */
export function sesEvent(kind: SesKind, o: SesEventOptions): Record<string, unknown> {
  const recipients = o.recipients ?? ['reader@example.org'];
  // events happen after the send: the timeline is ordered by when things happened
  const timestamp = o.timestamp ?? new Date().toISOString();
  const tags: Record<string, string[]> = { 'ses:configuration-set': ['tx-events'] };
  if (o.msgId) tags.msg_id = [o.msgId];
  const body: Record<string, unknown> = {
    [o.style ?? 'eventType']: kind,
    mail: { timestamp: new Date(Date.parse(timestamp) - 1000).toISOString(), messageId: o.sesMessageId, source: 'app@example.com', destination: recipients, tags },
  };
  switch (kind) {
    case 'Delivery':
      body.delivery = { timestamp, processingTimeMillis: 812, recipients, smtpResponse: '250 2.0.0 OK', reportingMTA: 'a8-1.smtp-out.amazonses.com' };
      break;
    case 'Bounce':
      body.bounce = {
        bounceType: o.bounceType ?? 'Permanent',
        bounceSubType: o.bounceType === 'Transient' ? 'MailboxFull' : 'General',
        bouncedRecipients: recipients.map((emailAddress) => ({ emailAddress, action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' })),
        timestamp,
        feedbackId: `fb-${o.sesMessageId}`,
        reportingMTA: 'dsn; mta.example.org',
      };
      break;
    case 'Complaint':
      body.complaint = {
        complainedRecipients: recipients.map((emailAddress) => ({ emailAddress })),
        timestamp,
        feedbackId: `fb-${o.sesMessageId}`,
        complaintFeedbackType: 'abuse',
      };
      break;
    case 'Open':
      body.open = { ipAddress: '192.0.2.1', timestamp, userAgent: 'Mozilla/5.0' };
      break;
    case 'Click':
      body.click = { ipAddress: '192.0.2.1', link: o.link ?? 'https://example.com/offer', linkTags: {}, timestamp, userAgent: 'Mozilla/5.0' };
      break;
  }
  return body;
}

export interface PostmarkOptions {
  /** our message id, echoed back in Metadata; omitted → the webhook names only Postmark's MessageID */
  msgId?: string;
  postmarkMessageId: string;
  recipient?: string;
  /** Postmark's record ID (bounces and complaints) */
  id?: number;
  /** when it happened; defaults to now */
  at?: string;
}

const now = (o: PostmarkOptions) => o.at ?? new Date().toISOString();

const metadata = (o: PostmarkOptions) => (o.msgId ? { Metadata: { msg_id: o.msgId } } : {});

export const postmark = {
  delivery: (o: PostmarkOptions) => ({
    RecordType: 'Delivery',
    ServerID: 23,
    MessageStream: 'outbound',
    MessageID: o.postmarkMessageId,
    Recipient: o.recipient ?? 'reader@example.org',
    Tag: '',
    DeliveredAt: now(o),
    Details: 'Test delivery webhook details',
    ...metadata(o),
  }),
  bounce: (o: PostmarkOptions & { type: string; inactive: boolean }) => ({
    RecordType: 'Bounce',
    ID: o.id ?? 4323372036854775807,
    Type: o.type,
    TypeCode: o.type === 'HardBounce' ? 1 : 4096,
    Name: o.type === 'HardBounce' ? 'Hard bounce' : 'Soft bounce',
    Tag: '',
    MessageID: o.postmarkMessageId,
    ServerID: 23,
    MessageStream: 'outbound',
    Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
    Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
    Email: o.recipient ?? 'reader@example.org',
    From: 'app@example.com',
    BouncedAt: now(o),
    DumpAvailable: true,
    Inactive: o.inactive,
    CanActivate: true,
    Subject: 'Hello',
    ...metadata(o),
  }),
  spamComplaint: (o: PostmarkOptions) => ({
    RecordType: 'SpamComplaint',
    ID: o.id ?? 42,
    Type: 'SpamComplaint',
    TypeCode: 512,
    Name: 'Spam complaint',
    Tag: '',
    MessageID: o.postmarkMessageId,
    ServerID: 23,
    MessageStream: 'outbound',
    Description: '',
    Details: 'Test spam complaint details',
    Email: o.recipient ?? 'reader@example.org',
    From: 'app@example.com',
    BouncedAt: now(o),
    DumpAvailable: true,
    Inactive: true,
    CanActivate: false,
    Subject: 'Hello',
    ...metadata(o),
  }),
  open: (o: PostmarkOptions & { receivedAt?: string }) => ({
    RecordType: 'Open',
    MessageStream: 'outbound',
    FirstOpen: true,
    Client: { Name: 'Chrome 35.0.1916.153', Company: 'Google', Family: 'Chrome' },
    OS: { Name: 'OS X 10.7 Lion', Company: 'Apple Computer, Inc.', Family: 'OS X 10' },
    Platform: 'WebMail',
    UserAgent: 'Mozilla/5.0 (Macintosh)',
    ReadSeconds: 5,
    Geo: { CountryISOCode: 'RS', Country: 'Serbia', City: 'Novi Sad', IP: '192.0.2.2' },
    MessageID: o.postmarkMessageId,
    ReceivedAt: o.receivedAt ?? now(o),
    Tag: '',
    Recipient: o.recipient ?? 'reader@example.org',
    ...metadata(o),
  }),
  click: (o: PostmarkOptions & { link?: string }) => ({
    RecordType: 'Click',
    MessageStream: 'outbound',
    ClickLocation: 'HTML',
    Client: { Name: 'Chrome 35.0.1916.153', Company: 'Google', Family: 'Chrome' },
    OS: { Name: 'OS X 10.7 Lion', Company: 'Apple Computer, Inc.', Family: 'OS X 10' },
    Platform: 'Desktop',
    UserAgent: 'Mozilla/5.0 (Macintosh)',
    OriginalLink: o.link ?? 'https://example.com/offer',
    Geo: { CountryISOCode: 'RS', Country: 'Serbia', City: 'Novi Sad', IP: '192.0.2.2' },
    MessageID: o.postmarkMessageId,
    ReceivedAt: now(o),
    Tag: '',
    Recipient: o.recipient ?? 'reader@example.org',
    ...metadata(o),
  }),
  subscriptionChange: (o: PostmarkOptions & { suppress: boolean; reason: 'HardBounce' | 'SpamComplaint' | 'ManualSuppression' | null; origin?: string }) => ({
    RecordType: 'SubscriptionChange',
    ServerID: 23,
    MessageStream: 'outbound',
    ChangedAt: now(o),
    Recipient: o.recipient ?? 'reader@example.org',
    Origin: o.origin ?? 'Recipient',
    SuppressSending: o.suppress,
    SuppressionReason: o.reason,
    Tag: '',
    MessageID: o.postmarkMessageId,
    ...metadata(o),
  }),
};
