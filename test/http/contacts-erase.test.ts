import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { recordOutcome, runScript, untilSent } from '../support/messages-http.js';
import { hookRequests, startScriptedReceiver, webhookClient, type ScriptedReceiver } from '../support/webhook-receiver.js';
import { postmark } from '../support/provider-events-payloads.js';
import { messageStream } from '../../src/domain/messages/events.js';

const HOOK_USER = 'pm-hook';
const HOOK_PASSWORD = 'pm-secret-password';

/** Every table of the test database, as `pg_dump` writes it: what a backup of the service holds. */
async function dump(app: TestApp): Promise<string> {
  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', app.config.DATABASE_URL!], { maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

describe('DELETE /api/contacts/:email?erase=true: forgetting a person in an append-only log', function () {
  this.timeout(120_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  const ADDRESS = 'Erin.Erasable@example.org';
  const FIRST = 'Zenobia';
  const LAST = 'Quillfeather';
  const SUBJECT = 'Subject-Marker-7f3a';
  const BODY = 'Body-Marker-c91e';
  const KEPT = 'kept.person@example.org';
  const ATTACHED = 'Attached-Marker-5e1f';
  const attachment = { filename: 'Zenobia-notes.txt', content: Buffer.from(ATTACHED).toString('base64'), contentType: 'text/plain' };
  const messages: string[] = [];
  let receiver: ScriptedReceiver;

  before(async () => {
    app = await startTestApp({ POSTMARK_WEBHOOK_USER: HOOK_USER, POSTMARK_WEBHOOK_PASSWORD: HOOK_PASSWORD });
    sender = await readyToSend(app);
    // Postmark reports a bounce of a message it has not yet told us it accepted: parked, payload and all
    const early = await app.request('POST', '/api/provider-events/postmark', {
      headers: { authorization: `Basic ${Buffer.from(`${HOOK_USER}:${HOOK_PASSWORD}`).toString('base64')}` },
      body: postmark.bounce({ postmarkMessageId: 'pm-not-yet-known', recipient: ADDRESS, id: 9001, type: 'HardBounce', inactive: true }),
    });
    expect(early.body).to.deep.equal({ recorded: 0, pending: 1 });
    // and one about the kept person, which the erasure leaves
    await app.request('POST', '/api/provider-events/postmark', {
      headers: { authorization: `Basic ${Buffer.from(`${HOOK_USER}:${HOOK_PASSWORD}`).toString('base64')}` },
      body: postmark.bounce({ postmarkMessageId: 'pm-not-yet-known-2', recipient: KEPT, id: 9002, type: 'HardBounce', inactive: true }),
    });
    const people = [
      { email: ADDRESS, firstName: FIRST, lastName: LAST },
      { email: KEPT, firstName: 'Keptina', lastName: 'Stayward' },
    ];
    for (const person of people) {
      const res = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { ...person, company: 'Marker Co' } });
      expect(res.status).to.equal(201);
    }
    for (const [to, name, marker] of [[ADDRESS, FIRST, ''], [ADDRESS.toLowerCase(), FIRST, ''], [KEPT, 'Keptina', 'Kept-']]) {
      const res = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: {
          to,
          fromEmail: sender.from,
          subject: `${marker}${SUBJECT} for {{name}}`,
          html: `<p>${marker}${BODY} {{name}}</p>`,
          text: `${marker}${BODY} {{name}}`,
          variables: { name },
          // a caller's unsubscribe link often names the recipient
          ...(to === ADDRESS ? { attachments: [attachment], unsubscribeUrl: `https://shop.example/unsubscribe?email=${ADDRESS}` } : {}),
        },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      messages.push(res.body.messageLogId);
    }
    await untilSent(app, messages);
    // a provider's refusal quotes the recipient (SES: "... failed the check in region US-EAST-1: <address>")
    const refused = await app.request('POST', '/api/send/transactional', {
      apiKey: sender.key,
      body: { to: ADDRESS, fromEmail: sender.from, subject: 's', html: '<p>h</p>', text: 't', sendAt: new Date(Date.now() + 86_400_000).toISOString() },
    });
    expect(refused.status).to.equal(201);
    const refusal = `MessageRejected: Email address is not verified. The following identities failed the check in region US-EAST-1: ${ADDRESS}`;
    await app.infra.eventStore.append(messageStream(refused.body.messageLogId), [
      { id: randomUUID(), type: 'ProviderFailed', data: { attempt: 1, error: refusal, failedAt: new Date().toISOString() } },
    ]);
    await eventually(() => app.infra.db('messages').where({ id: refused.body.messageLogId }).first('error'), (r) => r?.error === refusal);
    await recordOutcome(app, messages[0], 'Delivered', { recipient: ADDRESS });
    await recordOutcome(app, messages[0], 'Opened', { recipient: ADDRESS, ip: '203.0.113.77', userAgent: 'Marker-Agent/1.0' });
    // a webhook endpoint is told of the suppression, with the contact's names in the body
    receiver = await startScriptedReceiver([200]);
    await webhookClient(app).subscribe(receiver.hook);
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: ADDRESS, reason: 'asked by phone' } })).status).to.equal(201);
    const [hook] = await eventually(async () => hookRequests(receiver), (r) => r.length === 1);
    expect(JSON.parse(hook.body).data).to.include({ firstName: FIRST, email: ADDRESS.toLowerCase() });
    await eventually(() => app.infra.db('messages').where({ id: messages[0] }).first('opens'), (r) => r?.opens === 1);
  });
  after(async () => {
    await app?.close();
    await receiver?.close();
  });

  it('nothing in the database names the person before the erasure but the sealed log (the read models do)', async () => {
    const before = await dump(app);
    // the read models, the sandbox's record and the parked provider event hold the person: that is what an erasure must reach
    expect(before).to.include('pm-not-yet-known').and.to.include(FIRST).and.to.include(BODY).and.to.include(Buffer.from(ATTACHED).toString('hex'));
    // the log holds none of it in clear: no stream name, no event
    const { rows } = await app.infra.db.raw(`SELECT count(*)::int AS n FROM events WHERE data::text ILIKE ? OR stream_id ILIKE ? OR data::text LIKE ? OR data::text LIKE ?`, [
      `%${ADDRESS}%`,
      `%${ADDRESS}%`,
      `%${BODY}%`,
      `%${FIRST}%`,
    ]);
    expect(rows[0].n).to.equal(0);
  });

  it('answers {erased: true}; the messages still answer with their status and counts, their personal fields null', async () => {
    const aggregateBefore = (await app.request('GET', '/api/messages/aggregate', { token: app.adminToken })).body;
    const res = await app.request('DELETE', `/api/contacts/${encodeURIComponent(ADDRESS)}?erase=true`, { token: app.adminToken });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ erased: true });

    const message = await app.request('GET', `/api/messages/${messages[0]}`, { token: app.adminToken });
    expect(message.status).to.equal(200);
    expect(message.body).to.include({ to: null, subject: null, html: null, text: null, status: 'delivered', opens: 1 });
    expect(message.body.contact).to.equal(null);
    for (const e of message.body.events.filter((x: { type: string }) => x.type !== 'sent')) expect(e.data).to.include({ recipient: null, ip: null, userAgent: null });
    const history = await app.request('GET', `/api/messages/${messages[0]}/history`, { token: app.adminToken });
    expect(history.status).to.equal(200);
    expect(history.body[0].data).to.include({ to: null, subject: null, html: null, text: null });
    expect(JSON.stringify(history.body)).to.not.include(BODY);

    expect((await app.request('GET', '/api/messages/aggregate', { token: app.adminToken })).body).to.deep.equal(aggregateBefore);
    const kept = await app.request('GET', `/api/messages/${messages[2]}`, { token: app.adminToken });
    expect(kept.body).to.include({ to: KEPT, subject: `Kept-${SUBJECT} for Keptina` });
    expect(kept.body.contact).to.include({ email: KEPT, firstName: 'Keptina' });
  });

  it('the contact is gone; the suppression stays, by keyed hash only, and a later send to the address is refused', async () => {
    const contacts = await app.request('GET', '/api/contacts?search=erasable', { token: app.adminToken });
    expect(contacts.body.items).to.deep.equal([]);
    const list = await app.request('GET', '/api/suppressions', { token: app.adminToken });
    expect(list.body.items).to.have.length(1);
    expect(list.body.items[0]).to.include({ email: null, reason: 'manual', source: 'manual', detail: null });
    expect(list.body.items[0].person).to.be.a('string');
    const again = await app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to: ADDRESS.toUpperCase(), fromEmail: sender.from, subject: 's', html: '<p>h</p>', text: 't' } });
    expect(again.status).to.equal(400);
    expect(again.body.message).to.match(/is suppressed$/);
  });

  it('a dump of the whole database holds neither the address, the names, the subject, the body nor the visit', async () => {
    const after = await dump(app);
    // the kept person is still there: the dump is one that would show them
    expect(after).to.include(KEPT).and.to.include('Keptina').and.to.include(`Kept-${BODY}`).and.to.include('pm-not-yet-known-2');
    expect(after).not.to.include('pm-not-yet-known\t');
    const secrets = [ADDRESS, ADDRESS.toLowerCase(), FIRST, LAST, `>${SUBJECT}`, `"${SUBJECT}`, `>${BODY}`, `"${BODY}`, 'Marker-Agent', '203.0.113.77'];
    // the attachment's bytes, as text and as pg_dump writes bytea (hex), and its name
    secrets.push(ATTACHED, Buffer.from(ATTACHED).toString('hex'), attachment.content, 'Zenobia-notes');
    for (const secret of secrets) {
      const at = after.indexOf(secret);
      expect(at, `${secret} in: ${after.slice(Math.max(0, at - 300), at + 100)}`).to.equal(-1);
    }
  });

  it('a rebuild after the erasure gives the same redacted read models, and erasing again changes nothing', async () => {
    const snapshot = async () => ({
      messages: await app.infra.db('messages').orderBy('id'),
      events: await app.infra.db('message_events').orderBy(['message_id', 'revision']),
      changes: await app.infra.db('message_changes').orderBy(['commit_pos', 'prepare_pos']),
      contacts: await app.infra.db('contacts').orderBy('id'),
      suppressions: await app.infra.db('suppressions').orderBy('person'),
    });
    const live = await snapshot();
    for (const name of ['messages', 'message_changes', 'contacts', 'suppressions']) {
      const run = await runScript(app, 'rebuild', [name]);
      expect(run.code, run.stderr + run.stdout).to.equal(0);
    }
    expect(await snapshot()).to.deep.equal(live);
    const replay = await runScript(app, 'replay', [messages[0]]);
    expect(replay.code, replay.stderr).to.equal(0);
    expect(replay.stdout).to.not.include(BODY).and.to.not.include(ADDRESS.toLowerCase());

    const again = await app.request('DELETE', `/api/contacts/${ADDRESS}?erase=true`, { token: app.adminToken });
    expect(again.body).to.deep.equal({ erased: true });
    expect(await snapshot()).to.deep.equal(live);
  });

  it('refuses a DELETE without erase=true, and an address that is none', async () => {
    expect((await app.request('DELETE', `/api/contacts/${KEPT}`, { token: app.adminToken })).status).to.equal(400);
    expect((await app.request('DELETE', '/api/contacts/not-an-address?erase=true', { token: app.adminToken })).status).to.equal(400);
  });
});
