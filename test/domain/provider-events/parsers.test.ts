import { expect } from 'chai';
import { parseSesEvent } from '../../../src/domain/provider-events/ses-events.js';
import { parsePostmarkEvent } from '../../../src/domain/provider-events/postmark-events.js';
import { withoutPersonalPart } from '../../../src/domain/provider-events/provider-event-ids.js';

/** stands in for the service's keyed digest (MasterKey.digest) */
const digest = (text: string) => `digest(${text.length})`;

const mail = { messageId: 'ses-1', destination: ['a@x.com', 'b@x.com'], tags: { msg_id: ['m1'] } };

describe('SES event parsing', () => {
  it('maps a Permanent bounce per recipient, suppressing each', () => {
    const events = parseSesEvent('sns-1', {
      eventType: 'Bounce',
      mail,
      bounce: {
        bounceType: 'Permanent',
        bounceSubType: 'General',
        timestamp: '2026-01-01T00:00:00Z',
        bouncedRecipients: [{ emailAddress: 'a@x.com', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }, { emailAddress: 'b@x.com' }],
      },
    });
    // the id names the notification, not the recipient: each of our messages has one
    expect(events.map((e) => [e.recipient, e.providerEventId, e.messageId, e.providerMessageId, e.suppress?.reason])).to.deep.equal([
      ['a@x.com', 'ses:sns-1', 'm1', 'ses-1', 'bounced'],
      ['b@x.com', 'ses:sns-1', 'm1', 'ses-1', 'bounced'],
    ]);
    expect(events[0].outcome).to.deep.include({ type: 'Bounced' });
    expect(events[0].outcome!.data).to.include({ bounceType: 'hard', diagnostic: 'smtp; 550 5.1.1 user unknown', occurredAt: '2026-01-01T00:00:00.000Z' });
  });

  it('does not suppress on Transient or Undetermined bounces', () => {
    for (const bounceType of ['Transient', 'Undetermined']) {
      const [e] = parseSesEvent('sns-2', { eventType: 'Bounce', mail, bounce: { bounceType, bouncedRecipients: [{ emailAddress: 'a@x.com' }] } });
      expect(e.suppress).to.equal(undefined);
      expect(e.outcome!.data).to.include({ bounceType: 'soft' });
    }
  });

  it('accepts identity notifications (notificationType) as well as configuration-set events', () => {
    const [c] = parseSesEvent('sns-3', { notificationType: 'Complaint', mail: { messageId: 'ses-9' }, complaint: { complainedRecipients: [{ emailAddress: 'c@x.com' }] } });
    expect(c).to.deep.include({ messageId: null, providerMessageId: 'ses-9', recipient: 'c@x.com' });
    expect(c.suppress).to.deep.equal({ reason: 'complained', source: 'complaint' });
    // a feedback loop's correction is no complaint: nothing recorded, no one suppressed
    expect(parseSesEvent('sns-5', { eventType: 'Complaint', mail, complaint: { complaintFeedbackType: 'not-spam', complainedRecipients: [{ emailAddress: 'c@x.com' }] } })).to.deep.equal([]);
    const d = parseSesEvent('sns-4', { eventType: 'Delivery', mail, delivery: { recipients: ['a@x.com'], smtpResponse: '250 ok' } });
    expect(d.map((e) => e.outcome!.type)).to.deep.equal(['Delivered']);
  });

  it('maps opens and clicks to one event, and ignores kinds we do not track', () => {
    expect(parseSesEvent('s5', { eventType: 'Open', mail, open: { userAgent: 'UA' } })[0].outcome!.type).to.equal('Opened');
    const [click] = parseSesEvent('s6', { eventType: 'Click', mail, click: { link: 'https://x.com/a' } });
    expect(click.outcome!.data).to.include({ url: 'https://x.com/a', source: 'provider' });
    for (const kind of ['Reject', 'DeliveryDelay', 'Rendering Failure', 'Subscription', undefined]) {
      expect(parseSesEvent('s7', { eventType: kind, mail })).to.deep.equal([]);
    }
    expect(parseSesEvent('s8', null)).to.deep.equal([]);
  });

  it('a Send event with our msg_id tag proves the send, with SES\'s id and when it accepted it; without the tag it says nothing', () => {
    const sent = { ...mail, timestamp: '2026-01-01T00:00:00Z' };
    expect(parseSesEvent('s9', { eventType: 'Send', mail: sent, send: {} })).to.deep.equal([
      { provider: 'ses', messageId: 'm1', providerMessageId: 'ses-1', acceptedAt: '2026-01-01T00:00:00.000Z', recipient: 'a@x.com', providerEventId: 'ses:s9:send' },
    ]);
    expect(parseSesEvent('s10', { eventType: 'Send', mail: { ...sent, tags: {} }, send: {} })).to.deep.equal([]);
    // every kind carries when SES accepted the message
    expect(parseSesEvent('s11', { eventType: 'Delivery', mail: sent, delivery: { recipients: ['a@x.com'] } })[0].acceptedAt).to.equal('2026-01-01T00:00:00.000Z');
  });
});

describe('Postmark webhook parsing', () => {
  it('treats HardBounce and Inactive bounces as hard, others as soft', () => {
    const [hard] = parsePostmarkEvent({ RecordType: 'Bounce', ID: 42, Type: 'HardBounce', MessageID: 'pm-1', Email: 'a@x.com', Metadata: { msg_id: 'm1' } }, digest);
    expect(hard).to.deep.include({ messageId: 'm1', providerMessageId: 'pm-1', providerEventId: 'pm:bounce:42', recipient: 'a@x.com' });
    expect(hard.suppress).to.deep.equal({ reason: 'bounced', source: 'bounce' });
    const [inactive] = parsePostmarkEvent({ RecordType: 'Bounce', ID: 43, Type: 'SoftBounce', Inactive: true, MessageID: 'pm-1', Email: 'a@x.com' }, digest);
    expect(inactive.suppress?.reason).to.equal('bounced');
    const [soft] = parsePostmarkEvent({ RecordType: 'Bounce', ID: 44, Type: 'SoftBounce', Inactive: false, MessageID: 'pm-1', Email: 'a@x.com' }, digest);
    expect(soft.suppress).to.equal(undefined);
    // temporary trouble is not a dead address: no suppression unless Postmark deactivated it
    for (const Type of ['DnsError', 'Blocked', 'AddressChange', 'Transient']) {
      const [e] = parsePostmarkEvent({ RecordType: 'Bounce', ID: 45, Type, Inactive: false, MessageID: 'pm-1', Email: 'a@x.com' }, digest);
      expect(e.outcome!.data, Type).to.include({ bounceType: 'soft' });
      expect(e.suppress, Type).to.equal(undefined);
    }
  });

  it('maps complaints, deliveries, opens and clicks', () => {
    expect(parsePostmarkEvent({ RecordType: 'SpamComplaint', ID: 1, Email: 'a@x.com', MessageID: 'p' }, digest)[0].suppress?.reason).to.equal('complained');
    expect(parsePostmarkEvent({ RecordType: 'Delivery', MessageID: 'p', Recipient: 'a@x.com', DeliveredAt: '2026-01-01T00:00:00Z' }, digest)[0].outcome!.type).to.equal('Delivered');
    expect(parsePostmarkEvent({ RecordType: 'Open', MessageID: 'p', Recipient: 'a@x.com', ReceivedAt: 't' }, digest)[0].outcome!.type).to.equal('Opened');
    expect(parsePostmarkEvent({ RecordType: 'Click', MessageID: 'p', Recipient: 'a@x.com', OriginalLink: 'https://x' }, digest)[0].outcome!.data).to.include({ url: 'https://x' });
  });

  it('suppresses on a SubscriptionChange that starts suppressing, without recording a message outcome', () => {
    const ChangedAt = '2026-01-01T10:00:00Z';
    const [e] = parsePostmarkEvent({ RecordType: 'SubscriptionChange', MessageID: 'p', Recipient: 'a@x.com', SuppressSending: true, SuppressionReason: 'ManualSuppression', ChangedAt }, digest);
    expect(e.outcome).to.equal(undefined);
    // dated when Postmark made the change, not when its webhook reached us
    expect(e.suppress).to.deep.equal({ reason: 'manual', source: 'manual', occurredAt: '2026-01-01T10:00:00.000Z' });
    expect(parsePostmarkEvent({ RecordType: 'SubscriptionChange', Recipient: 'a@x.com', SuppressSending: false }, digest)).to.deep.equal([]);
    expect(parsePostmarkEvent({ RecordType: 'Unknown' }, digest)).to.deep.equal([]);
  });
});

describe('provider event ids name no one (they are kept in clear, after an erasure too)', () => {
  const address = 'Ada.Lovelace@example.org';
  const link = 'https://example.com/welcome?u=ada.lovelace';
  const mail = { messageId: 'ses-1', destination: [address], tags: { msg_id: ['m1'] } };
  const ses = [
    parseSesEvent('sns-1', { eventType: 'Delivery', mail, delivery: { recipients: [address] } }),
    parseSesEvent('sns-2', { eventType: 'Bounce', mail, bounce: { bounceType: 'Permanent', feedbackId: 'fb-1', bouncedRecipients: [{ emailAddress: address }] } }),
    parseSesEvent('sns-3', { eventType: 'Complaint', mail, complaint: { feedbackId: 'fb-2', complainedRecipients: [{ emailAddress: address }] } }),
    parseSesEvent('sns-4', { eventType: 'Open', mail, open: {} }),
    parseSesEvent('sns-5', { eventType: 'Click', mail, click: { link } }),
  ].flat();
  const at = '2026-01-01T00:00:00.1234567Z';
  const postmark = [
    { RecordType: 'Delivery', MessageID: 'pm-1', Recipient: address, DeliveredAt: at },
    { RecordType: 'Bounce', ID: 7, Type: 'HardBounce', MessageID: 'pm-1', Email: address, BouncedAt: at },
    { RecordType: 'SpamComplaint', ID: 8, MessageID: 'pm-1', Email: address, BouncedAt: at },
    { RecordType: 'Open', MessageID: 'pm-1', Recipient: address, ReceivedAt: at },
    { RecordType: 'Click', MessageID: 'pm-1', Recipient: address, ReceivedAt: at, OriginalLink: link },
    { RecordType: 'SubscriptionChange', MessageID: 'pm-1', Recipient: address, SuppressSending: true, ChangedAt: at },
  ].flatMap((p) => parsePostmarkEvent(p, digest));

  it('SES: the notification (or the feedback) names the event; Postmark: its MessageID, record ID or time, and a click its link by keyed digest', () => {
    expect(ses.map((e) => e.providerEventId)).to.deep.equal(['ses:sns-1', 'ses:feedback:fb-1', 'ses:feedback:fb-2', 'ses:sns-4', 'ses:sns-5']);
    expect(postmark.map((e) => e.providerEventId)).to.deep.equal([
      'pm:delivery:pm-1',
      'pm:bounce:7',
      'pm:complaint:8',
      `pm:open:pm-1:${at}`,
      `pm:click:pm-1:${digest(link)}`,
      `pm:subscription:pm-1:${at}`,
    ]);
    for (const e of [...ses, ...postmark]) {
      for (const id of [e.providerEventId, e.outcome?.data.providerEventId]) {
        expect(String(id)).to.not.include('ada').and.not.include('Ada').and.not.include('welcome');
      }
      // read as recorded: no rule for earlier versions' ids shortens them
      expect(withoutPersonalPart(e.providerEventId)).to.equal(e.providerEventId);
    }
  });

  it('the id an earlier version recorded the same report under is given as `formerId` (compared, never recorded), and shortened is this version’s id', () => {
    expect(ses.map((e) => e.formerId)).to.deep.equal([`ses:sns-1:${address}`, `ses:feedback:fb-1:${address}`, `ses:feedback:fb-2:${address}`, `ses:sns-4:${address}`, `ses:sns-5:${address}`]);
    expect(postmark.map((e) => e.formerId)).to.deep.equal([`pm:delivery:pm-1:${address}`, undefined, undefined, undefined, `pm:click:pm-1:${at}:${link}`, undefined]);
    for (const e of [...ses, ...postmark.slice(0, 1)]) expect(withoutPersonalPart(e.formerId!)).to.equal(e.providerEventId);
  });

  it('two links of one message clicked in the same instant are two events', () => {
    const click = (OriginalLink: string) => parsePostmarkEvent({ RecordType: 'Click', MessageID: 'pm-1', Recipient: address, ReceivedAt: at, OriginalLink }, digest)[0];
    expect(click('https://example.com/a').providerEventId).to.not.equal(click('https://example.com/bb').providerEventId);
  });
});
