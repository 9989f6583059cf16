import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import { sesEnv, startFakeSes, type FakeSes } from '../support/fake-ses.js';
import { queueDirect } from '../support/messages-http.js';
import { otherAccount, providerEventsClient } from '../support/provider-events-app.js';
import { sesEvent, type SesEventOptions, type SesKind } from '../support/provider-events-payloads.js';
import { OTHER_TEST_KEY_PEM, SNS_TEST_TOPIC_ARN, signSnsMessage, signedSnsNotification, startSnsCertServer, type SnsCertServer } from '../support/sns-signing.js';

/** A topic anyone could own: AWS signs its messages as validly as ours. */
const FOREIGN_TOPIC_ARN = 'arn:aws:sns:us-east-1:999999999999:ses-events';

describe('POST /api/provider-events/ses (SNS notifications)', function () {
  this.timeout(60_000);
  let certs: SnsCertServer;
  let ses: FakeSes;
  let app: TestApp;
  let client: ReturnType<typeof providerEventsClient>;
  let sender: { key: string; from: string };

  const post = (envelope: unknown) =>
    app.request('POST', '/api/provider-events/ses', {
      body: typeof envelope === 'string' ? envelope : JSON.stringify(envelope),
      headers: { 'content-type': 'text/plain; charset=UTF-8' },
    });
  const notify = (kind: SesKind, o: SesEventOptions, extra: { version?: '1' | '2'; messageId?: string } = {}) =>
    post(signedSnsNotification(sesEvent(kind, o), { certUrl: certs.certUrl, ...extra }));

  before(async () => {
    certs = await startSnsCertServer();
    ses = await startFakeSes();
    // a second listed topic: the allowlist is a list
    app = await startTestApp({ SNS_CERT_URL_PATTERN: certs.pattern.source, SNS_TOPIC_ARNS: `arn:aws:sns:eu-west-1:123456789012:other,${SNS_TEST_TOPIC_ARN}`, ...sesEnv(ses) });
    sender = await readyToSend(app);
    // SES events are about messages sent through SES: the account sends through the local SES
    await switchProvider(app, 'ses', { ses });
    client = providerEventsClient(app, sender);
  });
  after(async () => {
    await app?.close();
    await ses?.close();
    await certs?.close();
  });

  describe('signatures', () => {
    for (const version of ['1', '2'] as const) {
      it(`records a Delivery signed with SignatureVersion ${version}; the message shows delivered`, async () => {
        const m = await client.sendAccepted(`v${version}@example.org`);
        const res = await notify('Delivery', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [`v${version}@example.org`] }, { version });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body).to.deep.equal({ recorded: 1, pending: 0 });
        const view = await client.message(m.id, (v) => v.status === 'delivered');
        expect(view.events.map((e: any) => e.type)).to.deep.equal(['sent', 'delivered']);
        expect(view.events[1].data).to.include({ recipient: `v${version}@example.org`, smtpResponse: '250 2.0.0 OK' });
      });
    }

    it('403 for a tampered message and nothing recorded: not on the message, not parked', async () => {
      const m = await client.sendAccepted('tampered@example.org');
      const signed = signedSnsNotification(sesEvent('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: ['tampered@example.org'] }), {
        certUrl: certs.certUrl,
      });
      const tampered = { ...signed, Message: String(signed.Message).replace('Permanent', 'Transient') };
      const res = await post(tampered);
      expect(res.status).to.equal(403);
      expect(res.body).to.include({ statusCode: 403, error: 'Forbidden' });
      expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(await app.infra.db('unmatched_provider_events').where({ provider_message_id: m.providerMessageId })).to.have.length(0);
      expect(await client.suppressionRow('tampered@example.org')).to.equal(undefined);
      // the untouched message goes through: the 403 was the tampering, not the setup
      expect((await post(signed)).body).to.deep.equal({ recorded: 1, pending: 0 });
    });

    it('403 for a message signed by another key than the certificate’s', async () => {
      const m = await client.sendAccepted('otherkey@example.org');
      const message = JSON.stringify(sesEvent('Delivery', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: ['otherkey@example.org'] }));
      const forged = signSnsMessage(
        { Type: 'Notification', MessageId: crypto.randomUUID(), TopicArn: SNS_TEST_TOPIC_ARN, Message: message, Timestamp: new Date().toISOString() },
        { version: '2', certUrl: certs.certUrl, privateKeyPem: OTHER_TEST_KEY_PEM },
      );
      expect((await post(forged)).status).to.equal(403);
      expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
    });

    it('403 for a SigningCertURL outside SNS_CERT_URL_PATTERN, and that server is never asked', async () => {
      const elsewhere = await startSnsCertServer();
      try {
        const m = await client.sendAccepted('elsewhere@example.org');
        // correctly signed with the key whose certificate `elsewhere` serves: only the pattern refuses it
        const envelope = signedSnsNotification(sesEvent('Delivery', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: ['elsewhere@example.org'] }), {
          certUrl: elsewhere.certUrl,
        });
        const res = await post(envelope);
        expect(res.status).to.equal(403);
        expect(elsewhere.requests).to.deep.equal([]);
        expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      } finally {
        await elsewhere.close();
      }
    });

    it('fetches a certificate once and serves later messages from the cache', async () => {
      const m = await client.sendAccepted('cache@example.org');
      const open = { msgId: m.id, sesMessageId: m.providerMessageId, recipients: ['cache@example.org'] };
      const results = await Promise.all([1, 2, 3].map(() => notify('Open', open)));
      expect(results.map((r) => r.status)).to.deep.equal([200, 200, 200]);
      expect((await notify('Open', open)).status).to.equal(200);
      // however many messages came before or at once, this certificate was fetched one time in all
      expect(certs.requests.filter((p) => p === '/SimpleNotificationService-test.pem')).to.have.length(1);
    });

    it('400 for a body that is not an SNS message; 403 for an unknown Type or a missing signature', async () => {
      expect((await post('not json')).status).to.equal(400);
      expect((await post({ hello: 'world' })).status).to.equal(400);
      const unknownType = signSnsMessage(
        { Type: 'Surprise', MessageId: 'x', Message: '{}', Timestamp: new Date().toISOString(), TopicArn: SNS_TEST_TOPIC_ARN },
        { version: '2', certUrl: certs.certUrl },
      );
      expect((await post(unknownType)).status).to.equal(403);
      const unsigned = { ...signedSnsNotification({}, { certUrl: certs.certUrl }), Signature: undefined };
      expect((await post(unsigned)).status).to.equal(403);
      const version3 = { ...signedSnsNotification({}, { certUrl: certs.certUrl }), SignatureVersion: '3' };
      expect((await post(version3)).status).to.equal(403);
    });
  });

  describe('subscription confirmation', () => {
    const confirmation = (subscribeUrl: string, topicArn = SNS_TEST_TOPIC_ARN) => ({
      Type: 'SubscriptionConfirmation',
      MessageId: crypto.randomUUID(),
      Token: '2336412f37fb',
      TopicArn: topicArn,
      Message: `You have chosen to subscribe to the topic ${topicArn}.`,
      SubscribeURL: subscribeUrl,
      Timestamp: new Date().toISOString(),
    });
    const confirmations = () => certs.requests.filter((p) => p.startsWith('/confirm'));

    it('confirms a verified SubscriptionConfirmation by GETting its SubscribeURL', async () => {
      const before = confirmations().length;
      const res = await post(signSnsMessage(confirmation(certs.subscribeUrl), { version: '1', certUrl: certs.certUrl }));
      expect(res.status).to.equal(200);
      expect(confirmations()).to.have.length(before + 1);
      expect(confirmations().at(-1)).to.equal(new URL(certs.subscribeUrl).pathname + new URL(certs.subscribeUrl).search);
    });

    it('does not GET the SubscribeURL of a tampered confirmation (403)', async () => {
      const before = confirmations().length;
      const signed = signSnsMessage(confirmation(certs.subscribeUrl), { version: '2', certUrl: certs.certUrl });
      const res = await post({ ...signed, SubscribeURL: `${certs.baseUrl}/confirm?Action=ConfirmSubscription&Token=evil` });
      expect(res.status).to.equal(403);
      expect(confirmations()).to.have.length(before);
    });

    it('refuses (403) a correctly signed SubscribeURL outside the pattern without fetching it', async () => {
      const elsewhere = await startSnsCertServer();
      try {
        const res = await post(signSnsMessage(confirmation(elsewhere.subscribeUrl), { version: '2', certUrl: certs.certUrl }));
        expect(res.status).to.equal(403);
        expect(elsewhere.requests).to.deep.equal([]);
      } finally {
        await elsewhere.close();
      }
    });

    it('502 when SNS does not confirm, never a 500', async () => {
      const res = await post(signSnsMessage(confirmation(`${certs.baseUrl}/fail-confirm`), { version: '2', certUrl: certs.certUrl }));
      expect(res.status).to.equal(502);
      expect(res.body.statusCode).to.equal(502);
    });

    it('accepts a signed UnsubscribeConfirmation and records nothing', async () => {
      const res = await post(signSnsMessage({ ...confirmation(certs.subscribeUrl), Type: 'UnsubscribeConfirmation' }, { version: '2', certUrl: certs.certUrl }));
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ recorded: 0, pending: 0 });
    });
  });

  describe('SES events', () => {
    for (const style of ['eventType', 'notificationType'] as const) {
      it(`${style}: a Permanent bounce marks the message bounced and suppresses the address; the next send is 400`, async () => {
        const to = `hard-${style.toLowerCase()}@example.org`;
        const contact = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: to, firstName: 'Hard' } });
        expect(contact.status).to.equal(201);
        const m = await client.sendAccepted(to);
        const res = await notify('Bounce', { style, msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to], bounceType: 'Permanent' });
        expect(res.body).to.deep.equal({ recorded: 1, pending: 0 });
        // read-your-writes: the ingest call has returned, so this send must already be refused
        const again = await app.request('POST', '/api/send/transactional', {
          apiKey: sender.key,
          body: { to, fromEmail: sender.from, subject: 'Again', html: '<p>x</p>', text: 'x' },
        });
        expect(again.status).to.equal(400);
        expect(again.body).to.deep.equal({ message: `${to} is suppressed`, error: 'Bad Request', statusCode: 400 });

        const view = await client.message(m.id, (v) => v.status === 'bounced');
        expect(view.events.at(-1)).to.deep.include({ type: 'bounced' });
        expect(view.events.at(-1).data).to.include({ bounceType: 'hard', subType: 'General', diagnostic: 'smtp; 550 5.1.1 user unknown' });
        expect(await client.suppressionRow(to)).to.include({ reason: 'bounced', source: 'bounce', message_id: m.id, kind: 'email' });
        const [suppressed] = await client.suppressionEvents(to);
        expect(suppressed.type).to.equal('AddressSuppressed');
        expect(suppressed.data).to.include({ reason: 'bounced', source: 'bounce', value: to });
        const listed = await eventually(
          async () => (await app.request('GET', `/api/contacts?search=${encodeURIComponent(to)}`, { token: app.adminToken })).body?.items ?? [],
          (items: any[]) => items.some((c) => c.status === 'bounced'),
        );
        expect(listed.find((c: any) => c.email === to)).to.include({ id: contact.body.id, firstName: 'Hard', status: 'bounced' });
      });
    }

    it('a NUL character inside a genuine event (the database stores none) is kept as U+FFFD: the bounce is recorded, not a 500 that SNS retries', async () => {
      const to = 'nul@example.org';
      const m = await client.sendAccepted(to);
      const event = sesEvent('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] }) as any;
      event.bounce.bouncedRecipients[0].diagnosticCode = 'smtp; 550 bad\u0000byte';
      const posted = await post(signedSnsNotification(event, { certUrl: certs.certUrl }));
      expect(posted.status, JSON.stringify(posted.body)).to.equal(200);
      expect(posted.body).to.deep.equal({ recorded: 1, pending: 0 });
      const view = await client.message(m.id, (v) => v.status === 'bounced');
      expect(view.events.at(-1).data.diagnostic).to.equal('smtp; 550 bad\ufffdbyte');
      expect(await client.suppressionRow(to)).to.include({ reason: 'bounced', source: 'bounce' });
    });

    it('an unpaired UTF-16 surrogate inside a genuine event (jsonb refuses it) is kept as U+FFFD, as a NUL is', async () => {
      const to = 'surrogate@example.org';
      const m = await client.sendAccepted(to);
      const event = sesEvent('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] }) as any;
      event.bounce.bouncedRecipients[0].diagnosticCode = 'smtp; 550 \udc00bad\ud800';
      const posted = await post(signedSnsNotification(event, { certUrl: certs.certUrl }));
      expect(posted.status, JSON.stringify(posted.body)).to.equal(200);
      expect(posted.body).to.deep.equal({ recorded: 1, pending: 0 });
      const view = await client.message(m.id, (v) => v.status === 'bounced');
      expect(view.events.at(-1).data.diagnostic).to.equal('smtp; 550 \ufffdbad\ufffd');
    });

    it('a body or SNS Message nested deeper than 64 levels → 400 naming the limit, not a 500', async () => {
      const deep = '['.repeat(50_000) + ']'.repeat(50_000);
      const res = await fetch(`${app.baseUrl}/api/provider-events/ses`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: deep });
      expect(res.status).to.equal(400);
      expect((await res.json()).message).to.equal('request body is nested deeper than 64 levels');
      let nested: unknown = {};
      for (let i = 0; i < 100; i++) nested = { a: nested };
      const signed = await post(signedSnsNotification(nested as Record<string, unknown>, { certUrl: certs.certUrl }));
      expect(signed.status, JSON.stringify(signed.body)).to.equal(400);
      expect(signed.body.message).to.equal('SNS Message is nested deeper than 64 levels');
    });

    it('a Transient bounce is recorded as soft: no suppression, the status stays, sending again works', async () => {
      const to = 'soft@example.org';
      const m = await client.sendAccepted(to);
      expect((await notify('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to], bounceType: 'Transient' })).body).to.deep.equal({
        recorded: 1,
        pending: 0,
      });
      const view = await client.message(m.id, (v) => v.events.some((e: any) => e.type === 'bounced'));
      expect(view.status).to.equal('sent');
      expect(view.events.at(-1).data).to.include({ bounceType: 'soft', subType: 'MailboxFull' });
      expect(await client.suppressionRow(to)).to.equal(undefined);
      expect(await client.suppressionEvents(to)).to.deep.equal([]);
      await client.sendAccepted(to);
    });

    it('a Complaint marks the message complained and suppresses with source complaint (contact.complained)', async () => {
      const to = 'complainer@example.org';
      const m = await client.sendAccepted(to);
      await notify('Delivery', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] });
      expect((await notify('Complaint', { style: 'notificationType', msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] })).body).to.deep.equal({
        recorded: 1,
        pending: 0,
      });
      const view = await client.message(m.id, (v) => v.status === 'complained');
      expect(view.events.map((e: any) => e.type)).to.deep.equal(['sent', 'delivered', 'complained']);
      expect(view.events[2].data).to.include({ feedbackType: 'abuse' });
      const [suppressed] = await client.suppressionEvents(to);
      expect(suppressed.data).to.include({ reason: 'complained', source: 'complaint', messageId: m.id });
    });

    it('Open and Click go on the timeline and the counts, without changing the status', async () => {
      const m = await client.sendAccepted('engaged@example.org');
      await notify('Open', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: ['engaged@example.org'] });
      await notify('Click', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: ['engaged@example.org'], link: 'https://example.com/a?b=1' });
      const view = await client.message(m.id, (v) => v.clicks === 1);
      expect(view).to.include({ status: 'sent', opens: 1, clicks: 1 });
      expect(view.events.map((e: any) => e.type)).to.deep.equal(['sent', 'opened', 'clicked']);
      expect(view.events[1].data).to.include({ ip: '192.0.2.1', userAgent: 'Mozilla/5.0', source: 'provider' });
      expect(view.events[2].data).to.include({ url: 'https://example.com/a?b=1' });
    });

    it('maps by SES message id when the msg_id tag is missing', async () => {
      const m = await client.sendAccepted('untagged@example.org');
      await eventually(() => app.infra.db('provider_message_ids').where({ provider_message_id: m.providerMessageId }).first(), Boolean);
      expect((await notify('Delivery', { sesMessageId: m.providerMessageId, recipients: ['untagged@example.org'] })).body).to.deep.equal({ recorded: 1, pending: 0 });
      await client.message(m.id, (v) => v.status === 'delivered');
    });

    it('the same SNS message delivered twice (same MessageId) is recorded once', async () => {
      const m = await client.sendAccepted('twice@example.org');
      const envelope = signedSnsNotification(sesEvent('Open', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: ['twice@example.org'] }), { certUrl: certs.certUrl });
      const [a, b] = await Promise.all([post(envelope), post(envelope)]);
      expect([a.status, b.status]).to.deep.equal([200, 200]);
      // SNS's retry of the same message is re-signed, possibly with the other version: still the same event
      const resigned = signSnsMessage({ ...envelope }, { version: '1', certUrl: certs.certUrl });
      expect((await post(resigned)).status).to.equal(200);
      expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Opened']);
      const view = await client.message(m.id, (v) => v.opens === 1);
      expect(view.events.filter((e: any) => e.type === 'opened')).to.have.length(1);
    });

    it('the same bounce under two SNS MessageIds (identity notifications and event publishing both on) is recorded once, by its feedbackId', async () => {
      const to = 'reported-twice@example.org';
      const m = await client.sendAccepted(to);
      const bounce = { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] };
      await notify('Bounce', { ...bounce, style: 'notificationType' }, { messageId: 'sns-identity-1' });
      await notify('Bounce', bounce, { messageId: 'sns-config-set-1' });
      expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Bounced']);
    });

    it('a recipient entry that is not an object is passed over, not a 500 that SNS retries for an hour', async () => {
      const to = 'null-entry@example.org';
      const m = await client.sendAccepted(to);
      const event = sesEvent('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] }) as any;
      event.bounce.bouncedRecipients.unshift(null, 7);
      const posted = await post(signedSnsNotification(event, { certUrl: certs.certUrl }));
      expect(posted.status, JSON.stringify(posted.body)).to.equal(200);
      expect(posted.body).to.deep.equal({ recorded: 1, pending: 0 });
    });

    it('a Send event naming a message by its msg_id records SES\'s acceptance of it (a send whose answer was never recorded), once', async () => {
      const accountId = (await app.infra.db('accounts').where({ name: 'default' }).first('id')).id;
      // as if the worker died holding SES's answer
      const id = await queueDirect(app, { accountId, provider: 'ses', to: 'lost@example.org' }, { heldBySender: true });
      const sendEvent = signedSnsNotification(sesEvent('Send', { msgId: id, sesMessageId: 'ses-lost-1', recipients: ['lost@example.org'] }), { certUrl: certs.certUrl });
      expect((await post(sendEvent)).body).to.deep.equal({ recorded: 1, pending: 0 });
      expect((await post(sendEvent)).body).to.deep.equal({ recorded: 1, pending: 0 });
      const history = await app.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(history[1].data).to.include({ providerMessageId: 'ses-lost-1', provider: 'ses', attempt: 1 });
      const view = await client.message(id, (v) => v.status === 'sent');
      expect(view.providerMessageId).to.equal('ses-lost-1');
      // later events add only themselves
      expect((await notify('Delivery', { msgId: id, sesMessageId: 'ses-lost-1', recipients: ['lost@example.org'] })).body).to.deep.equal({ recorded: 1, pending: 0 });
      expect(await client.historyTypes(id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered']);
    });

    it('a Delivery for a message with no recorded acceptance records both, the acceptance first', async () => {
      const accountId = (await app.infra.db('accounts').where({ name: 'default' }).first('id')).id;
      const id = await queueDirect(app, { accountId, provider: 'ses', to: 'lost2@example.org' }, { heldBySender: true });
      expect((await notify('Delivery', { msgId: id, sesMessageId: 'ses-lost-2', recipients: ['lost2@example.org'] })).body).to.deep.equal({ recorded: 1, pending: 0 });
      expect(await client.historyTypes(id)).to.deep.equal(['EmailQueued', 'ProviderAccepted', 'Delivered']);
      await client.message(id, (v) => v.status === 'delivered' && v.providerMessageId === 'ses-lost-2');
    });

    it('an event for a message not known yet is parked, not lost; kinds not tracked are accepted and ignored', async () => {
      const res = await notify('Delivery', { sesMessageId: 'ses-not-yet-known', recipients: ['later@example.org'] });
      expect(res.body).to.deep.equal({ recorded: 0, pending: 1 });
      const parked = await app.infra.db('unmatched_provider_events').where({ provider_message_id: 'ses-not-yet-known' });
      expect(parked).to.have.length(1);
      const send = await post(
        signedSnsNotification({ eventType: 'Send', mail: { messageId: 'x', destination: ['a@example.org'], tags: {} }, send: {} }, { certUrl: certs.certUrl }),
      );
      expect(send.body).to.deep.equal({ recorded: 0, pending: 0 });
    });
  });

  describe('messages from elsewhere, or about someone else (hostile input)', () => {
    const nothingRecorded = async (m: { id: string; providerMessageId: string }, ...addresses: string[]) => {
      expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(await app.infra.db('unmatched_provider_events').where({ provider_message_id: m.providerMessageId })).to.have.length(0);
      for (const address of addresses) {
        expect(await client.suppressedIn(address), address).to.deep.equal([]);
        expect(await client.suppressionEvents(address), address).to.deep.equal([]);
      }
    };

    it('403 for a validly signed notification of a topic not in SNS_TOPIC_ARNS: nothing recorded, parked or suppressed', async () => {
      const to = 'foreign-topic@example.org';
      const m = await client.sendAccepted(to);
      const event = sesEvent('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] });
      const res = await post(signedSnsNotification(event, { certUrl: certs.certUrl, topicArn: FOREIGN_TOPIC_ARN }));
      expect(res.status).to.equal(403);
      expect(res.body).to.deep.equal({ message: `SNS message refused: topic ${FOREIGN_TOPIC_ARN} is not accepted`, error: 'Forbidden', statusCode: 403 });
      await nothingRecorded(m, to);
      // the same event from our topic is recorded: the topic was the only difference
      expect((await post(signedSnsNotification(event, { certUrl: certs.certUrl }))).body).to.deep.equal({ recorded: 1, pending: 0 });
    });

    it('403 for a SubscriptionConfirmation of a topic not in SNS_TOPIC_ARNS, and its SubscribeURL is never fetched', async () => {
      const confirmations = () => certs.requests.filter((p) => p.startsWith('/confirm')).length;
      const before = confirmations();
      const foreign = signSnsMessage(
        {
          Type: 'SubscriptionConfirmation',
          MessageId: crypto.randomUUID(),
          Token: '2336412f37fb',
          TopicArn: FOREIGN_TOPIC_ARN,
          Message: `You have chosen to subscribe to the topic ${FOREIGN_TOPIC_ARN}.`,
          SubscribeURL: certs.subscribeUrl,
          Timestamp: new Date().toISOString(),
        },
        { version: '2', certUrl: certs.certUrl },
      );
      const res = await post(foreign);
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal(`SNS message refused: topic ${FOREIGN_TOPIC_ARN} is not accepted`);
      expect(confirmations()).to.equal(before);
    });

    it('403 for a notification whose Timestamp is more than an hour old (a replay) or minutes ahead; one just inside the hour is recorded', async () => {
      const to = 'stale@example.org';
      const m = await client.sendAccepted(to);
      const event = sesEvent('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [to] });
      const stale = await post(signedSnsNotification(event, { certUrl: certs.certUrl, timestamp: new Date(Date.now() - 3_600_000 - 60_000).toISOString() }));
      expect(stale.status).to.equal(403);
      expect(stale.body).to.deep.equal({ message: 'SNS message refused: Timestamp is more than one hour old', error: 'Forbidden', statusCode: 403 });
      const ahead = await post(signedSnsNotification(event, { certUrl: certs.certUrl, timestamp: new Date(Date.now() + 10 * 60_000).toISOString() }));
      expect(ahead.status).to.equal(403);
      expect(ahead.body.message).to.equal('SNS message refused: Timestamp is in the future');
      await nothingRecorded(m, to);
      // SNS retries for an hour at most: its last retry of a genuine message still counts
      const late = await post(signedSnsNotification(event, { certUrl: certs.certUrl, timestamp: new Date(Date.now() - 3_600_000 + 60_000).toISOString() }));
      expect(late.body).to.deep.equal({ recorded: 1, pending: 0 });
    });

    it('a bounce naming the message’s recipient and another address of the account suppresses the recipient only', async () => {
      const to = 'bounced-for-real@example.org';
      const bystander = 'bystander@example.org';
      const contact = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: bystander, firstName: 'By' } });
      expect(contact.status).to.equal(201);
      const m = await client.sendAccepted(to);
      const res = await notify('Bounce', { msgId: m.id, sesMessageId: m.providerMessageId, recipients: [bystander, to] });
      expect(res.body).to.deep.equal({ recorded: 1, pending: 0 });
      expect(await client.suppressedIn(to)).to.have.length(1);
      expect(await client.suppressedIn(bystander)).to.deep.equal([]);
      const history = await app.infra.eventStore.readStream(`message-${m.id}`);
      expect(history.filter((e) => e.type === 'Bounced').map((e) => e.data.recipient)).to.deep.equal([to]);
    });

    it('a bounce naming only someone else is acknowledged and changes nothing (by our id or by SES’s)', async () => {
      const m = await client.sendAccepted('innocent@example.org');
      await eventually(() => app.infra.db('provider_message_ids').where({ provider_message_id: m.providerMessageId }).first(), Boolean);
      for (const msgId of [m.id, undefined]) {
        const res = await notify('Bounce', { msgId, sesMessageId: m.providerMessageId, recipients: ['victim@example.org'] });
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.equal({ recorded: 0, pending: 0 });
      }
      await nothingRecorded(m, 'victim@example.org', 'innocent@example.org');
    });

    it('a bounce naming a message of another account suppresses no address of this account, nor any of that one but its recipient', async () => {
      const other = await otherAccount(app, 'elsewhere-ses', 'ses', ses);
      const theirs = await providerEventsClient(app, other.sender).sendAccepted('their-reader@example.org');
      const ours = 'our-reader@example.org';
      expect((await notify('Bounce', { msgId: theirs.id, sesMessageId: theirs.providerMessageId, recipients: [ours] })).body).to.deep.equal({ recorded: 0, pending: 0 });
      await nothingRecorded(theirs, ours);
      // its own recipient is suppressed in its own account only
      expect((await notify('Bounce', { msgId: theirs.id, sesMessageId: theirs.providerMessageId, recipients: ['their-reader@example.org'] })).body).to.deep.equal({
        recorded: 1,
        pending: 0,
      });
      expect(await client.suppressedIn('their-reader@example.org')).to.deep.equal([other.accountId]);
    });

    it('an event naming the message by our id with another SES id than the one recorded, or about a message not sent through SES, changes nothing', async () => {
      const m = await client.sendAccepted('renamed@example.org');
      expect((await notify('Bounce', { msgId: m.id, sesMessageId: 'ses-someone-elses', recipients: ['renamed@example.org'] })).body).to.deep.equal({ recorded: 0, pending: 0 });
      await nothingRecorded(m, 'renamed@example.org');

      const accountId = (await app.infra.db('accounts').where({ name: 'default' }).first('id')).id;
      for (const provider of ['postmark', 'sandbox'] as const) {
        const id = await queueDirect(app, { accountId, provider, to: `via-${provider}@example.org` }, { heldBySender: true });
        const res = await notify('Bounce', { msgId: id, sesMessageId: `ses-${provider}`, recipients: [`via-${provider}@example.org`] });
        expect(res.body).to.deep.equal({ recorded: 0, pending: 0 });
        expect(await client.historyTypes(id)).to.deep.equal(['EmailQueued']);
        expect(await client.suppressedIn(`via-${provider}@example.org`)).to.deep.equal([]);
      }
    });
  });
});
