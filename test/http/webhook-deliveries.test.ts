import { expect } from 'chai';
import { signWebhookPayload, verifyWebhookSignature } from '../../src/domain/webhooks/signature.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { purgeFailedDeliveries } from '../../src/read-models/webhook-deliveries.js';
import { execute } from '../../src/commands/execute.js';
import { deliveryDecider, deliveryStream } from '../../src/domain/webhooks/delivery.js';
import { deliveryEffectId } from '../../src/domain/webhooks/delivery.js';
import { eventually } from '../support/email-setup.js';
import { verifyWebhook } from '../support/webhook-guide.js';
import { hookRequests, newAccount, startScriptedReceiver, type Reply, type ScriptedReceiver } from '../support/webhook-receiver.js';

const FIRST_RETRY_MS = 1500;

describe('webhook deliveries', function () {
  this.timeout(60_000);
  let app: TestApp;
  const receivers: ScriptedReceiver[] = [];
  const receiver = async (replies: Reply[] = [200]) => {
    const r = await startScriptedReceiver(replies);
    receivers.push(r);
    return r;
  };

  before(async () => {
    // the first retry waits long enough to watch the `retrying` state; the later ones are quick
    app = await startTestApp({ WEBHOOK_RETRY_DELAYS_MS: `${FIRST_RETRY_MS},100,100,100,100`, WEBHOOK_TIMEOUT_MS: '700' });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await app?.close();
  });

  it('a suppression gives exactly one delivery per subscription: the spec payload plus id, signed over the raw bytes received', async () => {
    const account = await newAccount(app);
    const [one, two] = [await receiver(), await receiver()];
    const subOne = await account.subscribe(one.hook);
    const subTwo = await account.subscribe(two.hook);
    const key = await account.call('POST', '/api/api-keys', { name: 'contacts', scopes: ['contacts:write'] });
    const contact = await app.request('POST', '/api/contacts', { apiKey: key.body.key, body: { email: 'ada@example.org', firstName: 'Ada', lastName: 'Lovelace' } });
    expect(contact.status).to.equal(201);
    await eventually(
      () => app.infra.db('contacts').where({ email: 'ada@example.org', account_id: account.accountId }).first(),
      (row) => Boolean(row),
    );

    const before = Math.floor(Date.now() / 1000);
    await account.suppress('Ada@Example.org');
    const item = await account.settled(subOne.id, 'delivered', 1);
    await account.settled(subTwo.id, 'delivered', 1);
    // suppressing again changes nothing, so nothing more is sent
    expect((await account.call('POST', '/api/suppressions', { email: 'ada@example.org' })).status).to.equal(200);

    const [req] = hookRequests(one);
    expect(hookRequests(one)).to.have.length(1);
    expect(hookRequests(two)).to.have.length(1);
    const payload = JSON.parse(req.body);
    expect(payload).to.have.keys('id', 'event', 'occurredAt', 'accountId', 'data');
    expect(payload.data).to.deep.equal({
      email: 'ada@example.org',
      source: 'manual',
      contactId: contact.body.id,
      firstName: 'Ada',
      lastName: 'Lovelace',
      campaignId: null,
    });
    expect(payload).to.include({ event: 'contact.suppressed', accountId: account.accountId });
    expect(payload.occurredAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(payload.id).to.be.a('string').and.not.empty;
    // both subscriptions see the same event id: receivers dedupe on it
    expect(JSON.parse(hookRequests(two)[0].body).id).to.equal(payload.id);

    expect(req.method).to.equal('POST');
    expect(req.headers['content-type']).to.match(/^application\/json/);
    expect(req.headers['x-service-event']).to.equal('contact.suppressed');
    expect(req.headers['x-service-delivery']).to.match(/^[a-z][a-z0-9]{20,}$/);
    expect(req.headers['x-service-attempt']).to.equal('1');
    const ts = Number(req.headers['x-service-timestamp']);
    expect(ts).to.be.within(before - 1, Math.floor(Date.now() / 1000) + 1);
    expect(req.headers['x-service-signature']).to.match(/^v1=[A-Za-z0-9+/]+=*$/);
    expect(verifyWebhookSignature(subOne.secret, req.headers['x-service-timestamp'] as string, req.body, req.headers['x-service-signature'] as string, { now: new Date() })).to.equal(true);
    expect(verifyWebhookSignature(subTwo.secret, req.headers['x-service-timestamp'] as string, req.body, req.headers['x-service-signature'] as string, { now: new Date() })).to.equal(false);

    expect(item).to.deep.include({ event: 'contact.suppressed', status: 'delivered', attempts: 1, lastResponseStatus: 200, lastError: null, nextAttemptAt: null });
    expect(item).to.have.keys('id', 'event', 'eventId', 'status', 'attempts', 'lastResponseStatus', 'lastError', 'nextAttemptAt', 'createdAt');
    expect(item.eventId).to.equal(JSON.parse(req.body).id);
  });

  describe('outcomes (the retry table)', () => {
    // Every row runs at once (each in its own account, to its own receiver); the tests read the results.
    const scenario = async (replies: Reply[], settle: (account: Awaited<ReturnType<typeof newAccount>>, subId: string) => Promise<any[]>) => {
      const account = await newAccount(app);
      const hook = await receiver(replies);
      const sub = await account.subscribe(hook.hook);
      await account.suppress('reader@example.org');
      const snapshots = await settle(account, sub.id);
      return { snapshots, requests: hookRequests(hook), account, subId: sub.id };
    };
    const retried: [string, Reply, number | null, RegExp][] = [
      ['408', 408, 408, /^HTTP 408$/],
      ['429', 429, 429, /^HTTP 429$/],
      ['500', 500, 500, /^HTTP 500$/],
      ['503', 503, 503, /^HTTP 503$/],
      ['a 3xx (never followed)', 301, 301, /^HTTP 301$/],
      ['a network error', 'drop', null, /socket hang up|ECONNRESET/],
      ['a timeout', 'hang', null, /no response within 700 ms/],
    ];
    const delivered = [200, 201, 204, 299];
    const failed = [400, 401, 403, 404, 410, 422];
    const results = new Map<string, Promise<Awaited<ReturnType<typeof scenario>>>>();
    const result = (name: string) => results.get(name)!;

    before(() => {
      const track = (name: string, p: ReturnType<typeof scenario>) => {
        p.catch(() => {}); // awaited (and reported) by its test
        results.set(name, p);
      };
      for (const [name, reply] of retried) {
        track(name, scenario([reply, 200], async (a, id) => [await a.settled(id, 'retrying', 1), await a.settled(id, 'delivered', 2)]));
      }
      for (const status of delivered) track(String(status), scenario([status], async (a, id) => [await a.settled(id, 'delivered', 1)]));
      for (const status of failed) {
        track(
          String(status),
          scenario([status, 200], async (a, id) => {
            const item = await a.settled(id, 'failed', 1);
            // long enough for a retry to have happened, had one been scheduled
            await new Promise((r) => setTimeout(r, FIRST_RETRY_MS + 700));
            return [item, (await a.deliveries(id))[0]];
          }),
        );
      }
    });

    for (const [name, , status, error] of retried) {
      it(`${name} → retrying with the next attempt time, then delivered on a 2xx`, async () => {
        const { snapshots, requests } = await result(name);
        const [waiting, done] = snapshots;
        expect(waiting).to.deep.include({ status: 'retrying', attempts: 1, lastResponseStatus: status });
        expect(waiting.lastError).to.match(error);
        const lastAttemptAt = Date.parse(waiting.nextAttemptAt) - FIRST_RETRY_MS;
        expect(lastAttemptAt).to.be.within(Date.parse(waiting.createdAt), Date.parse(waiting.createdAt) + 2_000);
        // the delay runs from the answer: a timed-out attempt's retry is due the full delay after the timeout
        if (name === 'a timeout') expect(lastAttemptAt).to.be.at.least(Date.parse(waiting.createdAt) + 700);
        expect(done).to.deep.include({ status: 'delivered', attempts: 2, lastResponseStatus: 200, lastError: null, nextAttemptAt: null });
        expect(requests.map((r) => r.headers['x-service-attempt'])).to.deep.equal(['1', '2']);
        expect(requests[0].body).to.equal(requests[1].body);
        expect(requests[0].headers['x-service-delivery']).to.not.equal(requests[1].headers['x-service-delivery']);
        // the log names the event as the receiver got it: the payload's id, which it deduplicates on
        expect(done.eventId).to.equal(JSON.parse(requests[0].body).id);
      });
    }

    for (const status of delivered) {
      it(`${status} → delivered at once`, async () => {
        const { snapshots, requests } = await result(String(status));
        expect(snapshots[0]).to.deep.include({ status: 'delivered', attempts: 1, lastResponseStatus: status, lastError: null, nextAttemptAt: null });
        expect(requests).to.have.length(1);
      });
    }

    for (const status of failed) {
      it(`${status} → failed at once, never retried`, async () => {
        const { snapshots, requests } = await result(String(status));
        expect(snapshots[0]).to.deep.include({ status: 'failed', attempts: 1, lastResponseStatus: status, lastError: `HTTP ${status}`, nextAttemptAt: null });
        expect(snapshots[1]).to.deep.equal(snapshots[0]);
        expect(requests).to.have.length(1);
      });
    }
  });

  it('attempts 1..6 with the configured delays, then failed; each attempt re-signed with a new delivery id, same body', async () => {
    const account = await newAccount(app);
    const hook = await receiver([503]);
    const sub = await account.subscribe(hook.hook);
    await account.suppress('down@example.org');
    const item = await account.settled(sub.id, 'failed', 6, 20_000);
    expect(item).to.deep.include({ lastResponseStatus: 503, lastError: 'HTTP 503', nextAttemptAt: null });
    const requests = hookRequests(hook);
    expect(requests.map((r) => r.headers['x-service-attempt'])).to.deep.equal(['1', '2', '3', '4', '5', '6']);
    expect(new Set(requests.map((r) => r.headers['x-service-delivery'])).size).to.equal(6);
    expect(new Set(requests.map((r) => r.body)).size).to.equal(1);
    for (const r of requests) {
      expect(verifyWebhookSignature(sub.secret, r.headers['x-service-timestamp'] as string, r.body, r.headers['x-service-signature'] as string, { now: new Date() })).to.equal(true);
    }
    const history = await app.infra.eventStore.readStream(`delivery-${item.id}`);
    expect(history.map((e) => e.type)).to.deep.equal([
      'WebhookDeliveryScheduled',
      ...Array(5).fill('WebhookAttemptFailed'),
      'WebhookDeliveryFailed',
    ]);
    // each failed attempt scheduled the next one its delay (1500, then 100 ms) after the answer, which
    // came within the attempt's timeout (700 ms) of its start
    const gaps = history.slice(1, 6).map((e) => Date.parse(e.data.nextAttemptAt) - Date.parse(e.data.at));
    [FIRST_RETRY_MS, 100, 100, 100, 100].forEach((delay, i) => expect(gaps[i]).to.be.within(delay, delay + 700));

    // POST /api/webhook-deliveries/:id/retry: a new series of attempts
    hook.script([200]);
    const retry = await account.call('POST', `/api/webhook-deliveries/${item.id}/retry`);
    expect(retry.status).to.equal(200);
    expect(retry.body).to.deep.include({ id: item.id, status: 'retrying', attempts: 0 });
    const done = await account.settled(sub.id, 'delivered', 1);
    expect(done).to.deep.include({ lastResponseStatus: 200, lastError: null });
    expect(hookRequests(hook)).to.have.length(7);
    expect(hookRequests(hook)[6].headers['x-service-attempt']).to.equal('1');
    expect(hookRequests(hook)[6].body).to.equal(requests[0].body);

    const again = await account.call('POST', `/api/webhook-deliveries/${item.id}/retry`);
    expect(again.status).to.equal(400);
    expect(again.body).to.deep.equal({ message: 'only a failed delivery can be retried (this one is delivered)', error: 'Bad Request', statusCode: 400 });
    const stranger = await newAccount(app);
    expect((await stranger.call('POST', `/api/webhook-deliveries/${item.id}/retry`)).status).to.equal(404);
    expect((await stranger.call('GET', `/api/webhooks/${sub.id}/deliveries`)).status).to.equal(404);
    expect((await account.call('POST', '/api/webhook-deliveries/nope/retry')).status).to.equal(404);
  });

  it('a retry the log has is made even when the endpoint stopped right after recording it', async () => {
    const account = await newAccount(app);
    const hook = await receiver([400]);
    const sub = await account.subscribe(hook.hook);
    await account.suppress('gone@example.org');
    const item = await account.settled(sub.id, 'failed', 1);
    hook.script([200]);
    // all that POST /api/webhook-deliveries/:id/retry has done when its process stops before it records the attempts' effect
    await execute(deliveryDecider, { kind: 'retry', accountId: account.accountId, subscriptionRemoved: false, by: 'user:test', now: new Date().toISOString() }, {
      eventStore: app.infra.eventStore,
      streamId: deliveryStream(item.id),
    });
    const done = await account.settled(sub.id, 'delivered', 1);
    expect(done).to.deep.include({ id: item.id, lastResponseStatus: 200 });
    expect(hookRequests(hook).map((r) => r.headers['x-service-attempt'])).to.deep.equal(['1', '1']);
  });

  it('a failed delivery of an endpoint removed since is not found for a retry (its log went with it); one about a person erased since answers 409, and nothing is sent', async () => {
    const account = await newAccount(app);
    const hook = await receiver([410, 410]);
    const removed = await account.subscribe(hook.hook);
    await account.suppress('left-behind@example.org');
    const orphan = await account.settled(removed.id, 'failed', 1);
    expect((await account.call('DELETE', `/api/webhooks/${removed.id}`)).status).to.equal(200);
    const retried = await account.call('POST', `/api/webhook-deliveries/${orphan.id}/retry`);
    expect([retried.status, retried.body.message]).to.deep.equal([404, `delivery ${orphan.id} not found`]);

    const sub = await account.subscribe(hook.hook);
    await account.suppress('forgotten-later@example.org');
    const item = await account.settled(sub.id, 'failed', 1);
    expect((await account.call('DELETE', '/api/contacts/forgotten-later@example.org?erase=true')).status).to.equal(200);
    const refused = await account.call('POST', `/api/webhook-deliveries/${item.id}/retry`);
    expect([refused.status, refused.body.message]).to.deep.equal([409, 'the person this delivery is about was erased: it cannot be sent again']);
    await new Promise((r) => setTimeout(r, 300));
    expect(hookRequests(hook)).to.have.length(2);
  });

  it('POST /api/webhooks/:id/test sends one signed webhook.test now, returns the result and lists it in the deliveries log', async () => {
    const account = await newAccount(app);
    const hook = await receiver([200]);
    const sub = await account.subscribe(hook.hook);
    const ok = await account.call('POST', `/api/webhooks/${sub.id}/test`);
    expect(ok.status).to.equal(200);
    expect(ok.body).to.deep.equal({ delivered: true, responseStatus: 200 });
    const [req] = hookRequests(hook);
    expect(req.headers['x-service-event']).to.equal('webhook.test');
    expect(req.headers['x-service-attempt']).to.equal('1');
    expect(JSON.parse(req.body)).to.include({ event: 'webhook.test', accountId: account.accountId });
    expect(verifyWebhookSignature(sub.secret, req.headers['x-service-timestamp'] as string, req.body, req.headers['x-service-signature'] as string, { now: new Date() })).to.equal(true);

    hook.script([500]);
    expect((await account.call('POST', `/api/webhooks/${sub.id}/test`)).body).to.deep.equal({ delivered: false, responseStatus: 500, error: 'HTTP 500' });
    hook.script(['hang']);
    expect((await account.call('POST', `/api/webhooks/${sub.id}/test`)).body).to.deep.equal({ delivered: false, responseStatus: null, error: 'no response within 700 ms' });
    // each test is in the endpoint's log as soon as the answer is, newest first, one attempt each
    const log = await account.deliveries(sub.id);
    expect(log.map(({ event, status, attempts, lastResponseStatus, lastError, nextAttemptAt }) => ({ event, status, attempts, lastResponseStatus, lastError, nextAttemptAt }))).to.deep.equal([
      { event: 'webhook.test', status: 'failed', attempts: 1, lastResponseStatus: null, lastError: 'no response within 700 ms', nextAttemptAt: null },
      { event: 'webhook.test', status: 'failed', attempts: 1, lastResponseStatus: 500, lastError: 'HTTP 500', nextAttemptAt: null },
      { event: 'webhook.test', status: 'delivered', attempts: 1, lastResponseStatus: 200, lastError: null, nextAttemptAt: null },
    ]);
    // a failed test starts no retries by itself (nothing is scheduled for it); the log's Retry does
    const scheduled = await app.infra.db('side_effects').whereIn('id', log.map((d: { id: string }) => deliveryEffectId(d.id, 1))).count({ n: '*' });
    expect(Number(scheduled[0].n)).to.equal(0);
    expect(JSON.parse(hookRequests(hook)[0].body).id).to.equal(log[2].id);
    hook.script([200]);
    const retried = await account.call('POST', `/api/webhook-deliveries/${log[1].id}/retry`);
    expect(retried.status).to.equal(200);
    const redelivered = await eventually(
      () => account.deliveries(sub.id),
      (items) => items.find((d: { id: string }) => d.id === log[1].id)?.status === 'delivered',
    );
    expect(redelivered.find((d: { id: string }) => d.id === log[1].id)).to.include({ event: 'webhook.test', attempts: 1, lastResponseStatus: 200 });
    expect(hookRequests(hook).at(-1)!.headers['x-service-event']).to.equal('webhook.test');
    expect((await account.call('POST', '/api/webhooks/nope/test')).status).to.equal(404);
    expect((await (await newAccount(app)).call('POST', `/api/webhooks/${sub.id}/test`)).status).to.equal(404);
  });

  it('the deliveries log comes a page at a time (limit, nextCursor) and by status, every delivery once', async () => {
    const account = await newAccount(app);
    const hook = await receiver([200]);
    const sub = await account.subscribe(hook.hook);
    for (let i = 0; i < 5; i++) await account.suppress(`paged${i}@example.org`);
    await eventually(() => account.deliveries(sub.id), (items) => items.length === 5 && items.every((d) => d.status === 'delivered'));
    hook.script([410]);
    await account.suppress('gone@example.org');
    await eventually(() => account.deliveries(sub.id), (items) => items.some((d) => d.status === 'failed'));

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await account.call('GET', `/api/webhooks/${sub.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      expect(page.body.items.length).to.be.at.most(2);
      seen.push(...page.body.items.map((d: { id: string }) => d.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).to.deep.equal((await account.deliveries(sub.id)).map((d) => d.id));
    expect(new Set(seen).size).to.equal(6);

    const failed = await account.call('GET', `/api/webhooks/${sub.id}/deliveries?status=failed`);
    expect(failed.body.items.map((d: { status: string }) => d.status)).to.deep.equal(['failed']);
    expect(failed.body.nextCursor).to.equal(null);
    for (const bad of ['status=lost', 'limit=0', 'limit=501', 'cursor=not-a-cursor', 'colour=red']) {
      expect((await account.call('GET', `/api/webhooks/${sub.id}/deliveries?${bad}`)).status, bad).to.equal(400);
    }
  });

  it('the event filter: a subscription receives only the events it chose', async () => {
    const account = await newAccount(app);
    const bounces = await receiver([200]);
    const all = await receiver([200]);
    const onlyBounces = await account.subscribe(bounces.hook, ['contact.bounced']);
    const everything = await account.subscribe(all.hook);
    await account.suppress('manual@example.org');
    await account.settled(everything.id, 'delivered', 1);
    // the fan-out handled the event for both subscriptions in one batch: none for the filtered one
    expect(await account.deliveries(onlyBounces.id)).to.deep.equal([]);
    expect(hookRequests(bounces)).to.have.length(0);
  });

  it('per-contact order to one endpoint holds even when the first delivery is retried', async () => {
    const account = await newAccount(app);
    const hook = await receiver([503, 200]);
    const sub = await account.subscribe(hook.hook);
    await account.suppress('order@example.org');
    await account.lift('order@example.org');
    await account.suppress('order@example.org');
    await account.lift('order@example.org');
    await account.suppress('order@example.org');
    await eventually(
      () => account.deliveries(sub.id),
      (items) => items.length === 3 && items.every((i) => i.status === 'delivered'),
      15_000,
    );
    const seen = hookRequests(hook).map((r) => ({ id: JSON.parse(r.body).id, attempt: r.headers['x-service-attempt'] }));
    expect(seen).to.have.length(4);
    const events = (await app.infra.eventStore.readStream(`suppression-${account.accountId}-${app.infra.privacy.personOf('order@example.org')}`)).filter((e) => e.type === 'AddressSuppressed');
    expect(seen).to.deep.equal([
      { id: events[0].id, attempt: '1' },
      { id: events[0].id, attempt: '2' },
      { id: events[1].id, attempt: '1' },
      { id: events[2].id, attempt: '1' },
    ]);
  });

  it('failed deliveries leave the read model after 14 days; others stay', async () => {
    const { db } = app.infra;
    const day = 24 * 3600 * 1000;
    const now = new Date('2030-01-31T12:00:00.000Z');
    const row = (id: string, status: string, ageDays: number) => ({
      id,
      account_id: 'purge-account',
      subscription_id: 'purge-sub',
      event: 'contact.bounced',
      status,
      attempts: 6,
      created_at: new Date(now.getTime() - ageDays * day - 3600_000),
      updated_at: new Date(now.getTime() - ageDays * day),
    });
    // failed deliveries of the tests before (failed webhook.test ones, say) are years older than `now`
    await purgeFailedDeliveries(db, now);
    await db('webhook_deliveries').insert([
      row('purge-old-failed', 'failed', 14.01),
      row('purge-young-failed', 'failed', 13.99),
      row('purge-old-delivered', 'delivered', 30),
      row('purge-old-retrying', 'retrying', 30),
    ]);
    expect(await purgeFailedDeliveries(db, now)).to.equal(1);
    const left = await db('webhook_deliveries').where({ account_id: 'purge-account' }).orderBy('id').pluck('id');
    expect(left).to.deep.equal(['purge-old-delivered', 'purge-old-retrying', 'purge-young-failed']);
    expect(await purgeFailedDeliveries(db, new Date(now.getTime() + day))).to.equal(1);
    expect(await purgeFailedDeliveries(db, new Date(now.getTime() + day))).to.equal(0);
  });

  it('the receiver’s guide (docs/webhooks.md) accepts a real delivery once, and refuses a duplicate, a tampered body and a stale timestamp', async () => {
    const account = await newAccount(app);
    const verdicts: string[] = [];
    let secret = '';
    const hook: ScriptedReceiver = await receiver([
      (req, res) => {
        // the local receiver has read the raw body already: it is the last request recorded
        const verdict = verifyWebhook(secret, req.headers, hook.requests[hook.requests.length - 1].body);
        verdicts.push(verdict);
        res.writeHead(verdict === 'ok' || verdict === 'duplicate' ? 200 : 401).end(verdict);
      },
    ]);
    const sub = await account.subscribe(hook.hook);
    secret = sub.secret;
    await account.suppress('guide@example.org');
    await account.settled(sub.id, 'delivered', 1);
    expect(verdicts).to.deep.equal(['ok']);
    const [req] = hookRequests(hook);
    const headers = req.headers as Record<string, string>;
    // the same request again (a retry after a lost 200): recognised by its id
    expect(verifyWebhook(secret, headers, req.body)).to.equal('duplicate');
    expect(verifyWebhook(secret, headers, req.body.replace('guide@', 'guise@'))).to.equal('bad signature');
    expect(verifyWebhook(secret, { ...headers, 'x-service-signature': undefined }, req.body)).to.equal('bad signature');
    const old = Math.floor(Date.now() / 1000) - 301;
    expect(verifyWebhook(secret, { ...headers, 'x-service-timestamp': String(old), 'x-service-signature': signWebhookPayload(secret, old, req.body) }, req.body)).to.equal('stale');
  });
});
