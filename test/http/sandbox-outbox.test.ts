import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';
import { untilSent } from '../support/messages-http.js';
import { readyToSendSms } from '../support/sms-setup.js';

describe('GET /api/sandbox/emails, /sms (what the sandbox providers recorded)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let emailId: string;
  let key: string;
  before(async () => {
    app = await startTestApp();
    const setup = await readyToSend(app);
    key = setup.key;
    const res = await app.request('POST', '/api/send/transactional', {
      apiKey: key,
      body: { to: 'ada@example.org', fromEmail: setup.from, subject: 'Hello', html: '<p>Hi</p>', text: 'Hi', unsubscribeUrl: 'https://example.com/u', attachments: [{ filename: 'a.txt', content: Buffer.from('abc').toString('base64') }] },
    });
    emailId = res.body.messageLogId;
    const sms = await readyToSendSms(app);
    const sent = await app.request('POST', '/api/send/sms', { apiKey: sms.key, body: { to: '+14155552671', body: 'Your code is 1234' } });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    await untilSent(app, [emailId, sent.body.messageLogId]);
  });
  after(async () => app?.close());

  it('lists recorded emails with their headers and attachment details, and serves an attachment', async () => {
    const res = await app.request('GET', '/api/sandbox/emails', { token: app.adminToken });
    expect(res.status).to.equal(200);
    const [email] = res.body.items;
    expect(email).to.deep.include({ messageId: emailId, to: 'ada@example.org', subject: 'Hello', text: 'Hi' });
    expect(email.headers.map((h: { name: string }) => h.name)).to.include('List-Unsubscribe');
    expect(email.attachments).to.deep.equal([{ position: 0, filename: 'a.txt', contentType: 'text/plain', contentId: null, size: 3 }]);
    const file = await fetch(`${app.baseUrl}/api/sandbox/emails/${emailId}/attachments/0`, { headers: { authorization: `Bearer ${app.adminToken}` } });
    expect(file.headers.get('content-disposition')).to.equal("attachment; filename*=UTF-8''a.txt");
    expect(await file.text()).to.equal('abc');
  });

  it('lists recorded SMS', async () => {
    const res = await app.request('GET', '/api/sandbox/sms', { token: app.adminToken });
    expect(res.body.items.map((s: { to: string; body: string }) => [s.to, s.body])).to.deep.equal([['+14155552671', 'Your code is 1234']]);
  });

  it("is for the account's admins only: another account sees nothing of it, an API key is refused", async () => {
    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'o@second.example', password: 'second-password' } });
    expect((await app.request('GET', '/api/sandbox/emails', { token: other.body.token })).body.items).to.deep.equal([]);
    expect((await app.request('GET', `/api/sandbox/emails/${emailId}/attachments/0`, { token: other.body.token })).status).to.equal(404);
    expect((await app.request('GET', '/api/sandbox/emails', { apiKey: key })).status).to.equal(403);
  });
});
