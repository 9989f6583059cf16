import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { hookRequests, startScriptedReceiver, webhookClient, type ScriptedReceiver } from '../support/webhook-receiver.js';

/**
 * The sandbox's mailbox simulator: what an integrator sends to test a bounce, a complaint or a delivery
 * end to end (status, suppression, webhook) without real mail.
 */
describe('the sandbox mailbox simulator (success@, bounce@, complaint@simulator.amazonses.com)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let from: string;
  let receiver: ScriptedReceiver;

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
    receiver = await startScriptedReceiver([200]);
    await webhookClient(app).subscribe(receiver.hook);
  });
  after(async () => {
    await app?.close();
    await receiver?.close();
  });

  const send = (to: string) =>
    app.request('POST', '/api/send/transactional', { apiKey: key, body: { to, fromEmail: from, subject: 'Simulated', html: '<p>hi</p>', text: 'hi' } });
  const settled = async (to: string, status: string) => {
    const res = await send(to);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return eventually(() => app.request('GET', `/api/messages/${res.body.messageLogId}`, { token: app.adminToken }).then((r) => r.body), (m) => m.status === status);
  };
  const hooksFor = (email: string) => hookRequests(receiver).map((r) => JSON.parse(r.body)).filter((b) => b.data.email === email);

  it('bounce@ is reported hard-bounced: the message bounced, the address suppressed, contact.bounced sent, the next send refused', async () => {
    const to = 'bounce+t1@simulator.amazonses.com';
    const message = await settled(to, 'bounced');
    // in the order it happened: the send, then the report of it
    expect(message.events.map((e: { type: string }) => e.type)).to.deep.equal(['sent', 'bounced']);
    const [suppression] = (await app.request('GET', '/api/suppressions?search=bounce%2Bt1', { token: app.adminToken })).body.items;
    expect(suppression).to.include({ email: to, reason: 'bounced', source: 'bounce' });
    const [hook] = await eventually(async () => hooksFor(to), (h) => h.length === 1);
    expect(hook).to.deep.include({ event: 'contact.bounced' });
    expect(hook.data).to.include({ email: to, source: 'bounce' });
    const again = await send(to);
    expect(again.status).to.equal(400);
    expect(again.body.message).to.equal(`${to} is suppressed`);
  });

  it('complaint@ is reported complained about: suppressed, contact.complained sent', async () => {
    const to = 'complaint@simulator.amazonses.com';
    await settled(to, 'complained');
    const [hook] = await eventually(async () => hooksFor(to), (h) => h.length === 1);
    expect(hook).to.deep.include({ event: 'contact.complained' });
  });

  it('success@ is reported delivered; any other address stays sent (the sandbox delivers nothing)', async () => {
    await settled('success@simulator.amazonses.com', 'delivered');
    const plain = await settled('reader@example.org', 'sent');
    await new Promise((r) => setTimeout(r, 500));
    expect((await app.request('GET', `/api/messages/${plain.id}`, { token: app.adminToken })).body.status).to.equal('sent');
  });
});
