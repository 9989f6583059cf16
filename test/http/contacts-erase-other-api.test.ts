import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { startApiOnly } from '../support/webhook-service.js';

/**
 * An API process follows no log: it learns of an erasure made through another one only when the keys
 * it cached expire (five seconds). After that it opens nothing of the person, and a new send through
 * it is a new person's data, under a new key, sent as usual.
 */
describe('an erasure made through another API process', function () {
  this.timeout(90_000);
  let app: TestApp;
  let other: Awaited<ReturnType<typeof startApiOnly>>;
  before(async () => {
    app = await startTestApp();
    other = await startApiOnly({ DATABASE_URL: app.config.DATABASE_URL!, ENCRYPTION_KEY: app.config.ENCRYPTION_KEY!, LOG_LEVEL: 'silent' });
  });
  after(async () => {
    await other?.close();
    await app?.close();
  });

  it('stops being readable through this one within five seconds; a later send through it goes out', async () => {
    const { key, from } = await readyToSend(app);
    const to = 'erased.elsewhere@example.org';
    const send = (marker: string) =>
      other.request('POST', '/api/send/transactional', { headers: { 'x-api-key': key }, body: { to, fromEmail: from, subject: marker, html: `<p>${marker}</p>`, text: marker } });
    const detail = (id: string) => other.request('GET', `/api/messages/${id}`, { token: app.adminToken });
    const first = (await send('Before-Erasure-71')).body.messageLogId;
    // read through the other API: it has the person's key cached now
    expect((await eventually(() => detail(first), (r) => r.body.status === 'sent')).body).to.include({ to, text: 'Before-Erasure-71' });

    expect((await app.request('DELETE', `/api/contacts/${encodeURIComponent(to)}?erase=true`, { token: app.adminToken })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 5_500));
    expect((await detail(first)).body).to.include({ to: null, subject: null, html: null, text: null });

    const later = (await send('After-Erasure-72')).body.messageLogId;
    expect((await eventually(() => detail(later), (r) => r.body.status === 'sent' || r.body.status === 'failed')).body).to.include({ status: 'sent', to, text: 'After-Erasure-72' });
  });
});
