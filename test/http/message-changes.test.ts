import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { recordOutcome, sendOne, untilSent } from '../support/messages-http.js';

describe('GET /api/messages/changes', function () {
  this.timeout(90_000);
  let app: TestApp;
  let keyA: string;
  let keyAId: string;
  let keyB: string;
  let keyC: string;
  let fromA: string;
  let fromB: string;
  const a: string[] = [];
  const b: string[] = [];
  const c: string[] = [];

  type Auth = { token?: string; apiKey?: string };
  const changes = (query: string, auth: Auth) => app.request('GET', `/api/messages/changes${query}`, auth);
  const jwt = () => ({ token: app.adminToken });

  /** Every page from the start (or a cursor) to the end, `limit` at a time. */
  async function readAll(auth: Auth, limit = 1000, after?: string) {
    const items: any[] = [];
    let cursor = after;
    for (;;) {
      const res = await changes(`?limit=${limit}${cursor ? `&after=${cursor}` : ''}`, auth);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      items.push(...res.body.items);
      cursor = res.body.nextCursor;
      if (res.body.items.length < limit) return { items, cursor: cursor! };
    }
  }

  /** The caller's message events in the log's commit order, as the feed must show them. */
  async function expectedFeed(messageIds: string[]) {
    const rows = await app.infra.db.raw(
      `SELECT event_id::text AS id, substr(stream_id, 9) AS message, type FROM events
       WHERE stream_id = ANY(?::text[]) AND type IN ('EmailQueued', 'ProviderAccepted', 'Delivered', 'Bounced', 'Complained', 'Opened', 'Clicked', 'ProviderFailed')
       ORDER BY tx_id, global_position`,
      [messageIds.map((id) => `message-${id}`)],
    );
    return rows.rows.map((r: any) => r.id);
  }

  before(async () => {
    app = await startTestApp();
    ({ key: keyA, keyId: keyAId, from: fromA } = await readyToSend(app));
    ({ key: keyB, from: fromB } = await readyToSend(app, { domain: 'other.example' }));
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'owner@second.example', password: 'second-password' } });
    const setupC = await readyToSend(app, { token: signup.body.token, domain: 'second.example' });
    keyC = setupC.key;
    for (let i = 0; i < 3; i++) a.push(await sendOne(app, keyA, { to: `alice${i}@example.org`, fromEmail: fromA, subject: `A ${i}` }));
    for (let i = 0; i < 2; i++) b.push(await sendOne(app, keyB, { to: `bob${i}@example.net`, fromEmail: fromB, subject: `B ${i}` }));
    c.push(await sendOne(app, keyC, { to: 'carol@example.org', fromEmail: setupC.from, subject: 'C' }));
    await untilSent(app, [...a, ...b, ...c]);
    await recordOutcome(app, a[0], 'Delivered');
    await recordOutcome(app, b[0], 'Bounced');
    await eventually(
      () => app.infra.db('message_changes').count<{ count: number }[]>('* as count'),
      (r) => Number(r[0].count) === 14,
    );
  });
  after(async () => app?.close());

  it("a key sees its own messages' events in commit order; the account's JWT sees every key's; no other account's", async () => {
    const own = await changes('', { apiKey: keyA });
    expect(own.status).to.equal(200);
    expect(own.body).to.have.keys('items', 'nextCursor');
    expect(own.body.items.map((i: any) => i.id)).to.deep.equal(await expectedFeed(a));
    expect(new Set(own.body.items.map((i: any) => i.messageLogId))).to.deep.equal(new Set(a));
    const queued = own.body.items.find((i: any) => i.messageLogId === a[0] && i.type === 'queued');
    expect(queued.data).to.deep.include({ channel: 'email', to: 'alice0@example.org', subject: 'A 0', apiKeyId: keyAId });
    expect(queued.data).not.to.have.any.keys('html', 'text');
    expect(queued.occurredAt).to.match(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(own.body.items.filter((i: any) => i.messageLogId === a[0]).map((i: any) => i.type)).to.deep.equal(['queued', 'sent', 'delivered']);

    const account = await changes('', jwt());
    expect(account.body.items.map((i: any) => i.id)).to.deep.equal(await expectedFeed([...a, ...b]));
    expect(account.body.items.filter((i: any) => i.messageLogId === b[0]).map((i: any) => i.type)).to.deep.equal(['queued', 'sent', 'bounced']);

    const other = await changes('', { apiKey: keyC });
    expect(other.body.items.map((i: any) => i.messageLogId)).to.deep.equal([c[0], c[0]]);
  });

  it('pages of one show the same events as one page, each once, and an empty last page keeps a cursor to poll', async () => {
    const whole = await readAll(jwt());
    const paged = await readAll(jwt(), 1);
    expect(paged.items.map((i) => i.id)).to.deep.equal(whole.items.map((i) => i.id));
    expect(new Set(paged.items.map((i) => i.id)).size).to.equal(paged.items.length);
    const empty = await changes(`?after=${paged.cursor}`, jwt());
    expect(empty.body).to.deep.equal({ items: [], nextCursor: paged.cursor });
  });

  it('following the feed while sends run concurrently misses nothing and repeats nothing', async () => {
    const start = (await readAll({ apiKey: keyA })).cursor;
    const seen: any[] = [];
    let done = false;
    const follower = (async () => {
      let cursor = start;
      // small pages and long polls, racing the sends below; once they are all in, read to the end
      for (;;) {
        const res = await changes(`?after=${cursor}&limit=3&wait=${done ? 0 : 2}`, { apiKey: keyA });
        expect(res.status).to.equal(200);
        seen.push(...res.body.items);
        cursor = res.body.nextCursor;
        if (done && res.body.items.length === 0) return;
      }
    })();
    const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => sendOne(app, keyA, { to: `burst${i}@example.org`, fromEmail: fromA, subject: `burst ${i}` })));
    // also sends of another key, interleaved in the log, which the follower must not see
    await Promise.all(Array.from({ length: 5 }, (_, i) => sendOne(app, keyB, { to: `noise${i}@example.net`, fromEmail: fromB, subject: 'noise' })));
    await untilSent(app, sent);
    await eventually(
      () => app.infra.db('message_changes').whereIn('message_id', sent).count<{ count: number }[]>('* as count'),
      (r) => Number(r[0].count) === 40,
    );
    done = true;
    await follower;
    expect(seen.map((i) => i.id)).to.deep.equal(await expectedFeed(sent));
  });

  it('a waiting poll answers as soon as the caller has news, with it', async () => {
    const { cursor } = await readAll({ apiKey: keyA });
    const started = Date.now();
    const poll = changes(`?after=${cursor}&wait=30`, { apiKey: keyA });
    const id = await sendOne(app, keyA, { to: 'waiting@example.org', fromEmail: fromA, subject: 'wake up' });
    const res = await poll;
    expect(res.status).to.equal(200);
    expect(res.body.items.length).to.be.greaterThan(0);
    expect(res.body.items[0]).to.include({ messageLogId: id, type: 'queued' });
    // far below the 30 s asked for: it was the send that answered it
    expect(Date.now() - started).to.be.below(25_000);
    await untilSent(app, [id]);
  });

  it('a waiting poll with nothing new answers at the end of its wait with no items and a cursor to poll again', async () => {
    const { cursor } = await readAll({ apiKey: keyC });
    const res = await changes(`?after=${cursor}&wait=1`, { apiKey: keyC });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ items: [], nextCursor: cursor });
    const fromStart = await changes('?wait=0', { apiKey: (await readyToSend(app, { domain: 'fresh.example' })).key });
    expect(fromStart.body.items).to.deep.equal([]);
    const again = await changes(`?after=${fromStart.body.nextCursor}`, { apiKey: keyC });
    expect(again.status).to.equal(200);
  });

  it('without a limit a page holds 100 events; the next page goes on from its cursor', async () => {
    const { key, from } = await readyToSend(app, { domain: 'many.example' });
    const messages = Array.from({ length: 60 }, (_, i) => ({ to: `many${i}@example.org`, fromEmail: from, subject: `M ${i}`, html: '<p>Hi</p>', text: 'Hi' }));
    const batch = await app.request('POST', '/api/send/batch', { apiKey: key, body: { messages } });
    expect(batch.body.items.map((i: { status: number }) => i.status), JSON.stringify(batch.body.items[0])).to.deep.equal(messages.map(() => 201));
    await untilSent(app, batch.body.items.map((i: { messageLogId: string }) => i.messageLogId));
    // each message queued and sent: 120 events, once the feed's read model has them all
    const all = await eventually(() => readAll({ apiKey: key }), (r) => r.items.length === 120);
    const first = await changes('', { apiKey: key });
    expect(first.body.items).to.have.lengthOf(100);
    const rest = await changes(`?after=${first.body.nextCursor}`, { apiKey: key });
    expect([...first.body.items, ...rest.body.items].map((i: { id: string }) => i.id)).to.deep.equal(all.items.map((i: { id: string }) => i.id));
  });

  it('refuses a cursor it never issued, a wait over 30 and a limit over 1,000 (400, naming the field)', async () => {
    const { cursor } = await readAll(jwt());
    const decoded = Buffer.from(cursor, 'base64url').toString();
    const forged = Buffer.from(decoded.replace(/^v1\.(\d+)/, (_, n) => `v1.${Number(n) + 1}`)).toString('base64url');
    // however it is wrong, too long included, the answer is the one the docs give
    for (const after of ['nonsense', 'x'.repeat(201), `${cursor}${'A'.repeat(200)}`, 'x'.repeat(4000), forged, Buffer.from('v1.1.1').toString('base64url'), `${cursor}A`]) {
      const res = await changes(`?after=${encodeURIComponent(after)}`, jwt());
      expect(res.status, after).to.equal(400);
      expect(res.body, after.slice(0, 40)).to.include({ error: 'Bad Request', statusCode: 400, message: 'after is not a cursor this feed issued' });
    }
    const cases: [string, RegExp][] = [
      ['?wait=31', /^wait.*30/],
      ['?wait=-1', /^wait/],
      ['?wait=1.5', /^wait/],
      ['?limit=1001', /^limit.*1000/],
      ['?limit=0', /^limit.*1/],
      ['?limit=', /^limit/],
      // the other lists' name for a cursor: ignored, it would start every poll from the oldest event
      [`?cursor=${cursor}`, /^cursor: this feed takes the nextCursor of its previous page as after$/],
    ];
    for (const [query, message] of cases) {
      const res = await changes(query, jwt());
      expect(res.status, query).to.equal(400);
      expect(res.body.message, query).to.match(message);
    }
  });

  it('needs read_events', async () => {
    const { key } = await readyToSend(app, { scopes: ['send'] });
    expect((await changes('', { apiKey: key })).status).to.equal(403);
    expect((await changes('', {})).status).to.equal(401);
  });

  it('is in /openapi.json with its parameters and an example answer', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    const op = doc.paths['/api/messages/changes'].get;
    expect(op['x-required-scope']).to.equal('read_events');
    expect(op.parameters.map((p: any) => p.name)).to.deep.equal(['after', 'wait', 'limit']);
    expect(op.responses['200'].content['application/json'].schema.example.items[0]).to.include.keys('id', 'messageLogId', 'type', 'occurredAt', 'data');
  });
});
