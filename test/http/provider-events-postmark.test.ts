import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import { execute } from '../../src/commands/execute.js';
import { messageDecider } from '../../src/domain/messages/message.js';
import { queueDirect } from '../support/messages-http.js';
import { otherAccount, providerEventsClient } from '../support/provider-events-app.js';
import { postmark } from '../support/provider-events-payloads.js';
import { startPostmarkApi, type PostmarkApi } from '../support/provider-events-postmark-api.js';

const USER = 'pm-hook';
const PASSWORD = 'pm-secret-password';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('POST /api/provider-events/postmark (Postmark webhooks)', function () {
  this.timeout(60_000);
  let api: PostmarkApi;
  let app: TestApp;
  let client: ReturnType<typeof providerEventsClient>;
  let sender: { key: string; from: string };

  const post = (body: unknown, authorization: string | null = basic(USER, PASSWORD)) =>
    app.request('POST', '/api/provider-events/postmark', { body, headers: authorization === null ? {} : { authorization } });
  const sendAccepted = async (to: string) => {
    const m = await client.sendAccepted(to);
    return { ...m, hook: { msgId: m.id, postmarkMessageId: m.providerMessageId, recipient: to } };
  };

  before(async () => {
    api = await startPostmarkApi();
    app = await startTestApp({
      POSTMARK_WEBHOOK_USER: USER,
      POSTMARK_WEBHOOK_PASSWORD: PASSWORD,
      POSTMARK_SERVER_TOKEN: 'server-token',
      POSTMARK_API_URL: api.url,
    });
    sender = await readyToSend(app);
    await switchProvider(app, 'postmark');
    client = providerEventsClient(app, sender);
  });
  after(async () => {
    await app?.close();
    await api?.close();
  });

  it('sends through the Postmark API with our message id in Metadata (the id webhooks echo back)', async () => {
    const m = await client.sendAccepted('meta@example.org');
    expect(api.sent.at(-1)).to.deep.include({ To: 'meta@example.org', Metadata: { msg_id: m.id } });
    expect(m.providerMessageId).to.match(/^pm-\d+$/);
  });

  describe('HTTP Basic', () => {
    for (const [name, authorization] of [
      ['no credentials', null],
      ['a wrong password', basic(USER, 'wrong-password')],
      ['a wrong user', basic('someone', PASSWORD)],
      ['a password that only starts right', basic(USER, PASSWORD.slice(0, -1))],
      ['another scheme', `Bearer ${PASSWORD}`],
      ['garbage', 'Basic %%%'],
    ] as const) {
      it(`401 for ${name}, and nothing recorded`, async () => {
        const m = await sendAccepted(`auth${name.length}@example.org`);
        const res = await post(postmark.bounce({ ...m.hook, type: 'HardBounce', inactive: true }), authorization);
        expect(res.status).to.equal(401);
        expect(res.body).to.include({ statusCode: 401, error: 'Unauthorized' });
        expect(res.headers.get('www-authenticate')).to.match(/^Basic /);
        expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
        expect(await client.suppressionRow(`auth${name.length}@example.org`)).to.equal(undefined);
      });
    }
  });

  describe('credentials before the body', () => {
    it('a wrong or missing credential is answered 401 before the body is read: a malformed, too deep or too large body changes nothing', async () => {
      const wrong = { authorization: basic(USER, 'wrong-password') };
      const bodies: [string, BodyInit][] = [
        ['malformed', '{"RecordType": "Bounce",'],
        ['too deep', '['.repeat(50_000) + ']'.repeat(50_000)],
        ['over 10 MB', Buffer.alloc(10 * 1024 * 1024 + 1, 0x20)],
      ];
      for (const [name, body] of bodies) {
        for (const headers of [wrong, {}]) {
          const res = await fetch(`${app.baseUrl}/api/provider-events/postmark`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
          expect(res.status, `${name}: ${await res.clone().text()}`).to.equal(401);
          expect(await res.json()).to.deep.equal({ message: 'invalid provider webhook credentials', error: 'Unauthorized', statusCode: 401 });
        }
      }
      // with the credentials, the same bodies are what is wrong
      const right = { authorization: basic(USER, PASSWORD), 'content-type': 'application/json' };
      const statuses = [];
      for (const [, body] of bodies) statuses.push((await fetch(`${app.baseUrl}/api/provider-events/postmark`, { method: 'POST', headers: right, body })).status);
      expect(statuses).to.deep.equal([400, 400, 413]);
    });
  });

  describe('record types', () => {
    it('a NUL character or an unpaired surrogate inside a genuine event is kept as U+FFFD: the bounce is recorded, not refused', async () => {
      const m = await sendAccepted('surrogate@example.org');
      const bounce = { ...postmark.bounce({ ...m.hook, id: 5001, type: 'HardBounce', inactive: true }), Details: 'smtp;550 bad\ud800byte\u0000' };
      const res = await post(bounce);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ recorded: 1, pending: 0 });
      const view = await client.message(m.id, (v) => v.status === 'bounced');
      expect(view.events.at(-1).data.diagnostic).to.equal('smtp;550 bad\ufffdbyte\ufffd');
    });

    it('Delivery: the message is delivered', async () => {
      const m = await sendAccepted('delivered@example.org');
      expect((await post(postmark.delivery(m.hook))).body).to.deep.equal({ recorded: 1, pending: 0 });
      const view = await client.message(m.id, (v) => v.status === 'delivered');
      expect(view.events.map((e: any) => e.type)).to.deep.equal(['sent', 'delivered']);
      expect(view.events[1].data).to.include({ recipient: 'delivered@example.org', smtpResponse: 'Test delivery webhook details' });
    });

    it('a HardBounce marks the message bounced and suppresses; the very next send is 400', async () => {
      const m = await sendAccepted('hard@example.org');
      expect((await post(postmark.bounce({ ...m.hook, id: 1001, type: 'HardBounce', inactive: true }))).body).to.deep.equal({ recorded: 1, pending: 0 });
      const again = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to: 'hard@example.org', fromEmail: sender.from, subject: 'Again', html: '<p>x</p>', text: 'x' },
      });
      expect(again.status).to.equal(400);
      expect(again.body.message).to.equal('hard@example.org is suppressed');
      const view = await client.message(m.id, (v) => v.status === 'bounced');
      expect(view.events.at(-1).data).to.include({ bounceType: 'hard', subType: 'HardBounce' });
      expect(await client.suppressionRow('hard@example.org')).to.include({ reason: 'bounced', source: 'bounce', message_id: m.id });
    });

    it('a SoftBounce is recorded as soft and suppresses nothing', async () => {
      const m = await sendAccepted('soft@example.org');
      expect((await post(postmark.bounce({ ...m.hook, id: 1002, type: 'SoftBounce', inactive: false }))).body).to.deep.equal({ recorded: 1, pending: 0 });
      const view = await client.message(m.id, (v) => v.events.some((e: any) => e.type === 'bounced'));
      expect(view.status).to.equal('sent');
      expect(view.events.at(-1).data).to.include({ bounceType: 'soft', subType: 'SoftBounce' });
      expect(await client.suppressionEvents('soft@example.org')).to.deep.equal([]);
    });

    it('a bounce Postmark made Inactive is hard whatever its Type', async () => {
      const m = await sendAccepted('inactive@example.org');
      await post(postmark.bounce({ ...m.hook, id: 1003, type: 'Blocked', inactive: true }));
      expect(await client.suppressionRow('inactive@example.org')).to.include({ reason: 'bounced', source: 'bounce' });
    });

    it('a SpamComplaint marks the message complained and suppresses with source complaint', async () => {
      const m = await sendAccepted('spam@example.org');
      expect((await post(postmark.spamComplaint({ ...m.hook, id: 2001 }))).body).to.deep.equal({ recorded: 1, pending: 0 });
      await client.message(m.id, (v) => v.status === 'complained');
      const [suppressed] = await client.suppressionEvents('spam@example.org');
      expect(suppressed.data).to.include({ reason: 'complained', source: 'complaint', messageId: m.id });
    });

    it('Open and Click go on the timeline and the counts', async () => {
      const m = await sendAccepted('reader@example.org');
      await post(postmark.open(m.hook));
      await post(postmark.click({ ...m.hook, link: 'https://example.com/x' }));
      const view = await client.message(m.id, (v) => v.opens === 1 && v.clicks === 1);
      expect(view.status).to.equal('sent');
      expect(view.events.map((e: any) => e.type)).to.deep.equal(['sent', 'opened', 'clicked']);
      expect(view.events[2].data).to.include({ url: 'https://example.com/x', source: 'provider' });
    });

    it('a SubscriptionChange that suppresses puts the address on the list (no message outcome); one that reactivates does nothing', async () => {
      const m = await sendAccepted('changed@example.org');
      expect((await post(postmark.subscriptionChange({ ...m.hook, suppress: false, reason: null }))).body).to.deep.equal({ recorded: 0, pending: 0 });
      expect(await client.suppressionRow('changed@example.org')).to.equal(undefined);
      expect((await post(postmark.subscriptionChange({ ...m.hook, suppress: true, reason: 'ManualSuppression', origin: 'Customer' }))).body).to.deep.equal({
        recorded: 1,
        pending: 0,
      });
      expect(await client.suppressionRow('changed@example.org')).to.include({ reason: 'manual', source: 'manual', message_id: m.id });
      expect(await client.historyTypes(m.id)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
    });

    it("a SubscriptionChange of the recipient's own (Postmark's unsubscribe link) is an unsubscribe: reason unsubscribed, source form, dated when Postmark made it", async () => {
      const m = await sendAccepted('left@example.org');
      const at = new Date(Date.now() - 15 * 60_000).toISOString();
      await post(postmark.subscriptionChange({ ...m.hook, suppress: true, reason: 'ManualSuppression', origin: 'Recipient', at }));
      const row = await client.suppressionRow('left@example.org');
      expect(row).to.include({ reason: 'unsubscribed', source: 'form', message_id: m.id });
      expect(row.created_at.toISOString()).to.equal(at);
    });

    it('an event about a message scheduled for later, or cancelled, proves no send: acknowledged, nothing recorded, the message still goes out at its time', async () => {
      const sendAt = new Date(Date.now() + 10 * 60_000).toISOString();
      const queue = (to: string) =>
        app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to, fromEmail: sender.from, subject: 'Later', html: '<p>x</p>', text: 'x', sendAt } });
      const later = await queue('later@example.org');
      expect(later.body.status).to.equal('scheduled');
      const forged = postmark.delivery({ msgId: later.body.messageLogId, postmarkMessageId: 'pm-forged-1', recipient: 'later@example.org' });
      expect((await post(forged)).body).to.deep.equal({ recorded: 0, pending: 0 });
      expect(await client.historyTypes(later.body.messageLogId)).to.deep.equal(['EmailQueued']);
      const cancel = await app.request('POST', `/api/messages/${later.body.messageLogId}/cancel`, { apiKey: sender.key });
      expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);

      const withdrawn = await queue('withdrawn@example.org');
      await app.request('POST', `/api/messages/${withdrawn.body.messageLogId}/cancel`, { apiKey: sender.key });
      const late = postmark.bounce({ msgId: withdrawn.body.messageLogId, postmarkMessageId: 'pm-forged-2', recipient: 'withdrawn@example.org', id: 1101, type: 'HardBounce', inactive: true });
      expect((await post(late)).body).to.deep.equal({ recorded: 0, pending: 0 });
      expect(await client.suppressionRow('withdrawn@example.org')).to.equal(undefined);
    });

    it('fields of the wrong type or size are left out or cut, not a 500: a Click whose OriginalLink is an object, a 100 KB Details', async () => {
      const m = await sendAccepted('odd@example.org');
      const click = { ...postmark.click({ ...m.hook, link: 'x' }), OriginalLink: {} };
      const clicked = await post(click);
      expect(clicked.status, JSON.stringify(clicked.body)).to.equal(200);
      const bounce = { ...postmark.bounce({ ...m.hook, id: 1201, type: 'SoftBounce', inactive: false }), Details: 'd'.repeat(100_000) };
      expect((await post(bounce)).body).to.deep.equal({ recorded: 1, pending: 0 });
      const view = await client.message(m.id, (v) => v.clicks === 1 && v.events.some((e: any) => e.type === 'bounced'));
      expect(view.events.find((e: any) => e.type === 'clicked').data.url).to.equal('');
      expect(view.events.find((e: any) => e.type === 'bounced').data.diagnostic).to.have.length(2_000);
    });

    it('accepts record types it does not track without recording anything', async () => {
      expect((await post({ RecordType: 'Inbound', MessageID: 'x' })).body).to.deep.equal({ recorded: 0, pending: 0 });
      expect((await post({ hello: 'world' })).status).to.equal(200);
    });
  });

  describe('mapping and duplicates', () => {
    it('maps by Postmark MessageID when Metadata is missing', async () => {
      const m = await sendAccepted('nometa@example.org');
      await eventually(() => app.infra.db('provider_message_ids').where({ provider_message_id: m.providerMessageId }).first(), Boolean);
      expect((await post(postmark.delivery({ postmarkMessageId: m.providerMessageId, recipient: 'nometa@example.org' }))).body).to.deep.equal({ recorded: 1, pending: 0 });
      await client.message(m.id, (v) => v.status === 'delivered');
    });

    it('the same bounce (record ID) and the same delivery twice are recorded once', async () => {
      const m = await sendAccepted('dupe@example.org');
      const bounce = postmark.bounce({ ...m.hook, id: 3001, type: 'SoftBounce', inactive: false });
      const delivery = postmark.delivery(m.hook);
      const results = await Promise.all([post(bounce), post(bounce), post(delivery), post(delivery)]);
      expect(results.map((r) => r.status)).to.deep.equal([200, 200, 200, 200]);
      expect((await client.historyTypes(m.id)).sort()).to.deep.equal(['Bounced', 'Delivered', 'EmailQueued', 'ProviderAccepted']);
      // a different bounce record for the same message is a new event
      await post(postmark.bounce({ ...m.hook, id: 3002, type: 'SoftBounce', inactive: false }));
      expect((await client.historyTypes(m.id)).filter((t) => t === 'Bounced')).to.have.length(2);
    });

    it('an event that arrives before the provider id is recorded is kept and applied once the id is known', async () => {
      const held = api.holdNext('pm-held-1');
      const res = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to: 'early@example.org', fromEmail: sender.from, subject: 'Hello', html: '<p>Hello</p>', text: 'Hello' },
      });
      expect(res.status).to.equal(201);
      const id = res.body.messageLogId;
      await held.received;
      // Postmark delivered and reported it while its API answer to us is still on the way
      const early = postmark.bounce({ postmarkMessageId: 'pm-held-1', recipient: 'early@example.org', id: 4001, type: 'HardBounce', inactive: true });
      expect((await post(early)).body).to.deep.equal({ recorded: 0, pending: 1 });
      expect((await post(early)).body).to.deep.equal({ recorded: 0, pending: 1 });
      expect(await app.infra.db('unmatched_provider_events').where({ provider_message_id: 'pm-held-1' })).to.have.length(1);
      expect(await client.historyTypes(id)).to.deep.equal(['EmailQueued']);

      held.release();
      const view = await client.message(id, (v) => v.status === 'bounced');
      // the timeline is ordered by when things happened: the bounce happened before our record of the acceptance
      expect(view.events.map((e: any) => e.type)).to.have.members(['sent', 'bounced']);
      await eventually(() => app.infra.db('unmatched_provider_events').where({ provider_message_id: 'pm-held-1' }), (rows) => rows.length === 0);
      expect(await client.suppressionRow('early@example.org')).to.include({ reason: 'bounced', source: 'bounce', message_id: id });
      // Postmark retrying the same webhook now changes nothing
      expect((await post(early)).body).to.deep.equal({ recorded: 1, pending: 0 });
      expect((await client.historyTypes(id)).filter((t) => t === 'Bounced')).to.have.length(1);
    });
  });

  describe('events about someone else, or about a message not sent through Postmark (hostile input)', () => {
    const nothingRecorded = async (id: string, ...addresses: string[]) => {
      expect(await client.historyTypes(id)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      for (const address of addresses) {
        expect(await client.suppressedIn(address), address).to.deep.equal([]);
        expect(await client.suppressionEvents(address), address).to.deep.equal([]);
      }
    };

    it('a bounce, complaint or subscription change naming another recipient than the message’s is acknowledged and changes nothing', async () => {
      const m = await sendAccepted('pm-innocent@example.org');
      const victim = 'pm-victim@example.org';
      for (const hook of [
        postmark.bounce({ ...m.hook, recipient: victim, id: 5001, type: 'HardBounce', inactive: true }),
        postmark.spamComplaint({ ...m.hook, recipient: victim, id: 5002 }),
        postmark.subscriptionChange({ ...m.hook, recipient: victim, suppress: true, reason: 'ManualSuppression' }),
        // by Postmark's id alone, too
        postmark.bounce({ postmarkMessageId: m.providerMessageId, recipient: victim, id: 5003, type: 'HardBounce', inactive: true }),
      ]) {
        const res = await post(hook);
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.equal({ recorded: 0, pending: 0 });
      }
      await nothingRecorded(m.id, victim, 'pm-innocent@example.org');
    });

    it('a MessageID that is an SES message’s changes nothing, named by our id or by the provider id', async () => {
      const accountId = (await app.infra.db('accounts').where({ name: 'default' }).first('id')).id;
      const to = 'via-ses@example.org';
      const id = await queueDirect(app, { accountId, provider: 'ses', to }, { heldBySender: true });
      await execute(messageDecider, { kind: 'providerAccepted', providerMessageId: 'ses-0001', provider: 'ses', attempt: 1, now: new Date().toISOString() }, {
        eventStore: app.infra.eventStore,
        streamId: `message-${id}`,
        metadata: { actor: 'system:test' },
      });
      await eventually(() => app.infra.db('provider_message_ids').where({ provider_message_id: 'ses-0001' }).first(), Boolean);
      for (const msgId of [id, undefined]) {
        const res = await post(postmark.bounce({ msgId, postmarkMessageId: 'ses-0001', recipient: to, id: 5101, type: 'HardBounce', inactive: true }));
        expect(res.body).to.deep.equal({ recorded: 0, pending: 0 });
      }
      await nothingRecorded(id, to);
    });

    it('a bounce naming our message by Metadata with another MessageID than the one Postmark gave it changes nothing', async () => {
      const m = await sendAccepted('pm-renamed@example.org');
      const res = await post(postmark.bounce({ ...m.hook, postmarkMessageId: 'pm-not-this-one', id: 5201, type: 'HardBounce', inactive: true }));
      expect(res.body).to.deep.equal({ recorded: 0, pending: 0 });
      await nothingRecorded(m.id, 'pm-renamed@example.org');
    });

    it('a MessageID of another account’s message never suppresses an address of this account; its own recipient only in its own account', async () => {
      const other = await otherAccount(app, 'elsewhere-pm', 'postmark');
      const theirs = await providerEventsClient(app, other.sender).sendAccepted('pm-their-reader@example.org');
      const ours = 'pm-our-reader@example.org';
      for (const msgId of [theirs.id, undefined]) {
        const res = await post(postmark.bounce({ msgId, postmarkMessageId: theirs.providerMessageId, recipient: ours, id: 5301, type: 'HardBounce', inactive: true }));
        expect(res.body).to.deep.equal({ recorded: 0, pending: 0 });
      }
      await nothingRecorded(theirs.id, ours);
      const own = await post(postmark.bounce({ postmarkMessageId: theirs.providerMessageId, recipient: 'pm-their-reader@example.org', id: 5302, type: 'HardBounce', inactive: true }));
      expect(own.body).to.deep.equal({ recorded: 1, pending: 0 });
      expect(await client.suppressedIn('pm-their-reader@example.org')).to.deep.equal([other.accountId]);
    });
  });
});
