import { expect } from 'chai';
import { startTestApp, type TestApp } from './app.js';
import { eventually, readyToSend } from './email-setup.js';

const DAY = 24 * 3600_000;

/**
 * Scheduled sends on the default queue (pg-boss), or on BullMQ when `env` names a Redis (null: skipped).
 * `onlyDue` leaves out the cases that queue jobs days ahead: a shared Redis would keep them after the run.
 */
export function scheduledSendSuite(title: string, env: () => Promise<Record<string, string> | null>, options: { onlyDue?: boolean } = {}) {
  const full = options.onlyDue ? it.skip : it;
  describe(title, function () {
    this.timeout(60_000);
    let app: TestApp;
    let key: string;
    let from: string;
    const send = (body: Record<string, unknown>, apiKey = key) =>
      app.request('POST', '/api/send/transactional', { apiKey, body: { to: 'reader@example.org', fromEmail: from, subject: 'Later', html: '<p>Later</p>', text: 'Later', ...body } });
    const cancel = (id: string, auth: { apiKey?: string; token?: string } = { apiKey: key }) => app.request('POST', `/api/messages/${id}/cancel`, auth);
    const detail = (id: string) => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }).then((r) => r.body);
    const inSandbox = (id: string) => app.infra.db('sandbox_emails').where({ message_id: id }).first();
    const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();

    before(async function () {
      const extra = await env();
      if (!extra) return this.skip();
      app = await startTestApp(extra);
      ({ key, from } = await readyToSend(app));
    });
    after(async () => app?.close());

    it('201 {queued, messageLogId, status: "scheduled", sendAt}; handed to the provider at its time, not before, then sent', async () => {
      const sendAt = ahead(2_000);
      const res = await send({ sendAt });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({ queued: true, messageLogId: res.body.messageLogId, status: 'scheduled', sendAt });
      const id = res.body.messageLogId;
      const scheduled = await eventually(() => detail(id), (m) => Boolean(m?.id));
      if (Date.now() < Date.parse(sendAt)) {
        expect(scheduled).to.include({ status: 'scheduled', sendAt });
        expect(await inSandbox(id)).to.equal(undefined);
      }
      const row = await eventually(() => inSandbox(id), (r) => Boolean(r));
      expect(row.created_at.getTime()).to.be.at.least(Date.parse(sendAt));
      const history = await eventually(() => app.infra.eventStore.readStream(`message-${id}`), (h) => h.some((e) => e.type === 'ProviderAccepted'));
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderAccepted']);
      expect(Date.parse(history[1].data.acceptedAt)).to.be.at.least(Date.parse(sendAt));
      expect((await eventually(() => detail(id), (m) => m.status === 'sent')).sendAt).to.equal(sendAt);
      // an answered send cannot be withdrawn any more
      const late = await cancel(id);
      expect(late.status).to.equal(409);
      expect(late.body).to.deep.equal({ message: 'message has already been handed to the provider and cannot be cancelled', error: 'Conflict', statusCode: 409 });
    });

    full('a send a worker has claimed (calling the provider now, nothing recorded yet) is too late to cancel: 409, and nothing is recorded', async () => {
      const id = (await send({ sendAt: ahead(DAY) })).body.messageLogId;
      // as the send worker's claim leaves the effect's row while it calls the provider
      const claimed = await eventually(() => app.infra.db('side_effects').where({ id: `send:${id}` }).update({ status: 'running', claimed_until: new Date(Date.now() + 60_000) }), (n) => n === 1);
      expect(claimed).to.equal(1);
      const late = await cancel(id);
      expect(late.status).to.equal(409);
      expect(late.body.message).to.equal('message has already been handed to the provider and cannot be cancelled');
      expect((await app.infra.eventStore.readStream(`message-${id}`)).map((e) => e.type)).to.deep.equal(['EmailQueued']);
      expect(await app.infra.db('side_effects').where({ id: `send:${id}` }).first('status')).to.deep.equal({ status: 'running' });
    });

    it('a cancelled send never reaches the provider; cancelling twice answers the same 200; the list and aggregate show it', async () => {
      const sendAt = ahead(1_500);
      const doomed = (await send({ sendAt, subject: 'Doomed' })).body.messageLogId;
      const witness = (await send({ sendAt, subject: 'Witness' })).body.messageLogId;
      const first = await cancel(doomed);
      expect(first.status).to.equal(200);
      expect(first.body).to.deep.equal({ id: doomed, status: 'cancelled' });
      const again = await cancel(doomed, { token: app.adminToken });
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal({ id: doomed, status: 'cancelled' });
      // the witness, due at the same instant, went out; its twin did not, and its send effect is done
      await eventually(() => inSandbox(witness), Boolean);
      await eventually(() => app.infra.db('side_effects').where({ id: `send:${doomed}` }).first(), (r) => r?.status === 'done');
      expect(await inSandbox(doomed)).to.equal(undefined);
      const history = await app.infra.eventStore.readStream(`message-${doomed}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'MessageCancelled']);
      expect(history[1].metadata.actor).to.match(/^apikey:/);
      expect((await detail(doomed)).status).to.equal('cancelled');
      const listed = await app.request('GET', '/api/messages?status=cancelled', { token: app.adminToken });
      expect(listed.body.items.map((m: any) => m.id)).to.include(doomed);
      const agg = await app.request('GET', '/api/messages/aggregate', { token: app.adminToken });
      expect(agg.body.status).to.include.keys('scheduled', 'cancelled');
      expect(agg.body.status.cancelled).to.be.at.least(1);
    });

    it('a send whose recipient was erased before its time fails at once, without reaching the provider or retrying', async () => {
      const to = 'forgotten@example.org';
      await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: to } });
      const id = (await send({ to, sendAt: ahead(1_500), subject: 'For someone forgotten' })).body.messageLogId;
      expect((await app.request('DELETE', `/api/contacts/${to}?erase=true`, { token: app.adminToken })).status).to.equal(200);
      // its error is sealed under the message's key like all it holds, which the erasure destroyed
      await eventually(() => detail(id), (m) => m.status === 'failed', 20_000);
      expect(await inSandbox(id)).to.equal(undefined);
      const history = await app.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderFailed']);
      expect(history[1].data.attempt).to.equal(0);
      const cancelled = await cancel(id);
      expect([cancelled.status, cancelled.body.message]).to.deep.equal([409, 'message has already failed without being sent and cannot be cancelled']);
    });

    it('a send from a domain removed before its time fails saying so, without reaching the provider; a cancel then says it failed unsent', async () => {
      const domain = await app.request('POST', '/api/domains', { token: app.adminToken, body: { domain: 'leaving.example' } });
      expect((await app.request('POST', `/api/domains/${domain.body.id}/verify`, { token: app.adminToken })).status).to.equal(200);
      const id = (await send({ fromEmail: 'news@leaving.example', sendAt: ahead(1_500) })).body.messageLogId;
      expect(id).to.be.a('string');
      expect((await app.request('DELETE', `/api/domains/${domain.body.id}`, { token: app.adminToken })).status).to.equal(204);
      const failed = await eventually(() => detail(id), (m) => m.status === 'failed', 20_000);
      expect(failed.error).to.equal('news@leaving.example is not verified for sending: not sent, the sender was no longer verified when the message was due');
      expect(await inSandbox(id)).to.equal(undefined);
      expect((await cancel(id)).body.message).to.equal('message has already failed without being sent and cannot be cancelled');
    });

    it('a send whose recipient unsubscribed (one click) before its time fails naming the suppression, without reaching the provider; the feed and detail show it', async () => {
      const to = 'changed-their-mind@example.org';
      const first = (await send({ to, unsubscribeUrl: 'https://example.com/prefs' })).body.messageLogId;
      const id = (await send({ to, sendAt: ahead(2_000), subject: 'After the unsubscribe' })).body.messageLogId;
      const [queued] = await app.infra.eventStore.readStream(`message-${first}`);
      const url = queued.data.headers.find((h: { name: string }) => h.name === 'List-Unsubscribe').value.slice(1, -1);
      const oneClick = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(oneClick.status).to.equal(200);
      expect((await send({ to })).body.message).to.equal(`${to} is suppressed`);

      const error = `${to} is suppressed (unsubscribed): not sent, the recipient was suppressed after the message was accepted`;
      const failed = await eventually(() => detail(id), (m) => m.status === 'failed', 20_000);
      expect(failed).to.include({ error, providerMessageId: null });
      expect(await inSandbox(id)).to.equal(undefined);
      const history = await app.infra.eventStore.readStream(`message-${id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['EmailQueued', 'ProviderFailed']);
      expect(history[1].metadata.actor).to.equal('system:send-worker');
      const feed = await eventually(
        () => app.request('GET', '/api/messages/changes?limit=1000', { apiKey: key }).then((r) => r.body.items.filter((c: any) => c.messageLogId === id)),
        (items) => items.length === 2,
      );
      expect(feed.map((c: any) => c.type)).to.deep.equal(['queued', 'failed']);
      expect(feed[1].data).to.deep.include({ attempt: 0, error });
      const cancelled = await cancel(id);
      expect(cancelled.status).to.equal(409);
      expect(cancelled.body.message).to.equal('message has already failed without being sent and cannot be cancelled');
      await eventually(() => app.infra.db('side_effects').where({ id: `send:${id}` }).first(), (r) => r?.status === 'done');
    });

    full('a dashboard user (JWT) may cancel any message of the account; another key gets 404, as for an unknown id', async () => {
      const id = (await send({ sendAt: ahead(DAY) })).body.messageLogId;
      const other = await app.createApiKey(['send', 'read_events']);
      const foreign = await cancel(id, { apiKey: other.key });
      expect(foreign.status).to.equal(404);
      expect(foreign.body).to.deep.equal({ message: `message ${id} not found`, error: 'Not Found', statusCode: 404 });
      expect((await cancel('nosuchmessage')).status).to.equal(404);
      const readOnly = await app.createApiKey(['read_events']);
      expect((await cancel(id, { apiKey: readOnly.key })).status).to.equal(403);
      const byUser = await cancel(id, { token: app.adminToken });
      expect(byUser.status).to.equal(200);
      expect(byUser.body).to.deep.equal({ id, status: 'cancelled' });
    });

    full('400 naming sendAt and the limit: in the past, beyond 30 days, not an instant', async () => {
      const past = await send({ sendAt: ahead(-60_000) });
      expect(past.status).to.equal(400);
      expect(past.body.message).to.equal('sendAt: must be in the future, at most 30 days ahead');
      expect(past.body.issues).to.deep.equal([{ field: 'sendAt', message: 'must be in the future, at most 30 days ahead' }]);
      const far = await send({ sendAt: ahead(30 * DAY + 60_000) });
      expect(far.status).to.equal(400);
      expect(far.body.message).to.equal('sendAt: must be at most 30 days ahead');
      const notInstant = await send({ sendAt: 'tomorrow' });
      expect(notInstant.status).to.equal(400);
      // one problem, said once
      expect(notInstant.body.issues.filter((i: { field: string }) => i.field === 'sendAt')).to.have.length(1);
      expect((await send({ sendAt: ahead(29 * DAY) })).status).to.equal(201);
    });

    full('the scheduled send takes its cap slot on the day it is accepted', async () => {
      const capped = await app.createApiKey(['send'], { dailyLimit: 1 });
      expect((await send({ sendAt: ahead(7 * DAY) }, capped.key)).status).to.equal(201);
      const second = await send({}, capped.key);
      expect(second.status).to.equal(400);
    });
  });
}
