import { expect } from 'chai';
import { formatReplay } from '../../src/commands/replay.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { queueDirect, recordOutcome, runScript, sendOne, untilSent } from '../support/messages-http.js';

describe('GET /api/messages, /:id, /aggregate, /:id/history', function () {
  this.timeout(90_000);
  let app: TestApp;
  let keyA: string;
  let keyAId: string;
  let keyB: string;
  let keyC: string;
  let otherToken: string;
  let accountId: string;
  const a: string[] = []; // sent with key A from app@example.com to alice…@example.org
  const b: string[] = []; // sent with key B from app@other.example to bob…@example.net
  const c: string[] = []; // another account
  const list = (query: string, auth: { token?: string; apiKey?: string }) => app.request('GET', `/api/messages${query}`, auth);
  const jwt = () => ({ token: app.adminToken });
  const ids = (res: { body: any }) => res.body.items.map((m: any) => m.id);

  before(async () => {
    app = await startTestApp();
    const setupA = await readyToSend(app);
    ({ key: keyA, keyId: keyAId } = setupA);
    const setupB = await readyToSend(app, { domain: 'other.example' });
    keyB = setupB.key;
    for (let i = 0; i < 20; i++) a.push(await sendOne(app, keyA, { to: `alice${i}@example.org`, fromEmail: setupA.from, subject: i < 10 ? `Invoice ${i}` : 'Welcome aboard' }));
    for (let i = 0; i < 8; i++) b.push(await sendOne(app, keyB, { to: `bob${i}@example.net`, fromEmail: setupB.from, subject: 'Receipt 100% paid' }));
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'owner@second.example', password: 'second-password' } });
    otherToken = signup.body.token;
    const setupC = await readyToSend(app, { token: otherToken, domain: 'second.example' });
    keyC = setupC.key;
    for (let i = 0; i < 2; i++) c.push(await sendOne(app, keyC, { to: `alice${i}@example.org`, fromEmail: setupC.from, subject: 'Invoice 0' }));
    const rows = await untilSent(app, [...a, ...b, ...c]);
    accountId = rows.find((r) => r.id === a[0])!.account_id;

    await recordOutcome(app, a[0], 'Delivered');
    await recordOutcome(app, a[1], 'Bounced');
    await recordOutcome(app, a[2], 'Delivered');
    await recordOutcome(app, a[2], 'Complained');
    await recordOutcome(app, a[3], 'Delivered');
    await recordOutcome(app, a[3], 'Opened');
    await recordOutcome(app, a[3], 'Opened');
    await recordOutcome(app, a[3], 'Clicked');
    await recordOutcome(app, a[4], 'Opened', { suspectedBot: true });
    await recordOutcome(app, b[0], 'Delivered');
    await recordOutcome(app, b[0], 'Opened');
    await eventually(
      () => app.infra.db('messages').where({ id: b[0] }).first(),
      (row) => row?.opens === 1,
    );
  });
  after(async () => app?.close());

  /** The account's messages as the database orders them: newest first, ties by id. */
  const newestFirst = async (where: Record<string, unknown> = {}) =>
    (await app.infra.db('messages').where({ account_id: accountId, ...where }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])).map((r) => r.id);

  describe('GET /api/messages', () => {
    it('newest first, 25 by default, then the rest behind nextCursor; null on the last page', async () => {
      const first = await list('', jwt());
      expect(first.status).to.equal(200);
      expect(first.body).to.have.keys('items', 'nextCursor');
      expect(first.body.items).to.have.length(25);
      const second = await list(`?cursor=${first.body.nextCursor}`, jwt());
      expect(second.body.items).to.have.length(3);
      expect(second.body.nextCursor).to.equal(null);
      expect([...ids(first), ...ids(second)]).to.deep.equal(await newestFirst());
      const item = first.body.items.find((m: any) => m.id === a[3]);
      expect(item).to.deep.include({
        channel: 'email',
        apiKeyId: keyAId,
        status: 'delivered',
        from: 'app@example.com',
        to: 'alice3@example.org',
        subject: 'Invoice 3',
        provider: 'sandbox',
        providerMessageId: `sandbox-${a[3]}`,
        opens: 2,
        clicks: 1,
      });
      expect(new Date(item.createdAt).toISOString()).to.equal(item.createdAt);
    });

    it('limit up to 100; 0, 101 or a non-number → 400 in the error shape', async () => {
      expect((await list('?limit=100', jwt())).body.items).to.have.length(28);
      expect((await list('?limit=2', jwt())).body.items).to.have.length(2);
      const over = await list('?limit=101', jwt());
      expect(over.status).to.equal(400);
      expect(over.body).to.have.keys('message', 'error', 'statusCode', 'issues');
      expect(over.body.issues).to.deep.equal([{ field: 'limit', message: over.body.message.slice('limit: '.length) }]);
      expect(over.body).to.include({ error: 'Bad Request', statusCode: 400 });
      expect(over.body.message).to.match(/^limit: /);
      expect((await list('?limit=0', jwt())).status).to.equal(400);
      expect((await list('?limit=ten', jwt())).status).to.equal(400);
    });

    it('a cursor that is not one of ours → 400 cursor is invalid, never a server error', async () => {
      const forged = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      for (const cursor of ['garbage', forged(['2024-02-30T00:00:00.000Z', 'x']), forged(['yesterday', 'x']), forged(['2024-01-01T00:00:00.000Z', 'a\u0000b']), forged({})]) {
        const res = await list(`?cursor=${encodeURIComponent(cursor)}`, jwt());
        expect(res.status, cursor).to.equal(400);
        expect(res.body).to.deep.equal({ message: 'cursor is invalid', error: 'Bad Request', statusCode: 400 });
      }
    });

    it('status filters by message status; an unknown status → 400', async () => {
      const delivered = await list('?status=delivered', jwt());
      expect(ids(delivered).sort()).to.deep.equal([a[0], a[3], b[0]].sort());
      expect(ids(await list('?status=bounced', jwt()))).to.deep.equal([a[1]]);
      expect(ids(await list('?status=complained', jwt()))).to.deep.equal([a[2]]);
      expect(ids(await list('?status=sent&limit=100', jwt()))).to.have.length(28 - 5);
      expect(ids(await list('?status=queued', jwt()))).to.deep.equal([]);
      expect((await list('?status=opened', jwt())).status).to.equal(400);
    });

    it('search matches recipient, sender and subject, case-insensitively; % and _ are literal', async () => {
      expect(ids(await list('?search=ALICE7@', jwt()))).to.deep.equal([a[7]]);
      expect(ids(await list('?search=other.example&limit=100', jwt())).sort()).to.deep.equal([...b].sort());
      expect(ids(await list('?search=invoice&limit=100', jwt())).sort()).to.deep.equal(a.slice(0, 10).sort());
      expect(ids(await list(`?search=${encodeURIComponent('100%')}&limit=100`, jwt()))).to.have.length(8);
      expect(ids(await list(`?search=${encodeURIComponent('%')}&limit=100`, jwt())).sort()).to.deep.equal([...b].sort());
      expect(ids(await list(`?search=${encodeURIComponent('alice_')}`, jwt()))).to.deep.equal([]);
      expect(ids(await list('?search=nobody', jwt()))).to.deep.equal([]);
      expect((await list('?search=%00', jwt())).status).to.equal(400);
    });

    it('from/to are ISO 8601 instants on createdAt, both inclusive; anything else → 400', async () => {
      const all = (await list('?limit=100', jwt())).body.items;
      const pivot = all[10].createdAt;
      const later = ids(await list(`?from=${pivot}&limit=100`, jwt()));
      const earlier = ids(await list(`?to=${pivot}&limit=100`, jwt()));
      expect(later).to.deep.equal(all.filter((m: any) => m.createdAt >= pivot).map((m: any) => m.id));
      expect(earlier).to.deep.equal(all.filter((m: any) => m.createdAt <= pivot).map((m: any) => m.id));
      const offset = new Date(pivot).toISOString().replace('Z', '+00:00');
      expect(ids(await list(`?from=${encodeURIComponent(offset)}&to=${encodeURIComponent(offset)}`, jwt()))).to.deep.equal(all.filter((m: any) => m.createdAt === pivot).map((m: any) => m.id));
      expect(ids(await list('?from=2999-01-01T00:00:00Z', jwt()))).to.deep.equal([]);
      expect(ids(await list('?to=2000-01-01T00:00:00Z', jwt()))).to.deep.equal([]);
      for (const bad of ['yesterday', '2024-01-01', '2024-02-30T00:00:00Z']) expect((await list(`?from=${bad}`, jwt())).status, bad).to.equal(400);
      expect((await list('?to=1700000000', jwt())).status).to.equal(400);
    });

    it('filters combine, and the cursor keeps them', async () => {
      const page1 = await list('?search=example.org&status=sent&limit=4', jwt());
      const expected = (await newestFirst({ status: 'sent' })).filter((id) => a.includes(id));
      const page2 = await list(`?search=example.org&status=sent&limit=4&cursor=${page1.body.nextCursor}`, jwt());
      expect([...ids(page1), ...ids(page2)]).to.deep.equal(expected.slice(0, 8));
    });

    it('an API key sees only the messages it sent; a JWT sees the whole account; another account sees none of them', async () => {
      expect(ids(await list('?limit=100', { apiKey: keyA })).sort()).to.deep.equal([...a].sort());
      expect(ids(await list('?limit=100', { apiKey: keyB })).sort()).to.deep.equal([...b].sort());
      expect(ids(await list('?limit=100', jwt()))).to.have.length(28);
      expect(ids(await list('?limit=100', { token: otherToken })).sort()).to.deep.equal([...c].sort());
      expect(ids(await list('?search=alice0@', { apiKey: keyC }))).to.deep.equal([c[0]]);
      const sendOnly = await app.createApiKey(['send']);
      const denied = await list('', { apiKey: sendOnly.key });
      expect(denied.status).to.equal(403);
      expect(denied.body.message).to.equal('API key is missing required scope: read_events');
      expect((await list('', {})).status).to.equal(401);
    });

    it('cursor paging across 5 pages while new messages arrive: no duplicates, no gaps among those that existed', async () => {
      // an account of its own, so the other tests' counts stay as they are
      const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Paging', email: 'owner@paging.example', password: 'paging-password' } });
      const fresh = await readyToSend(app, { token: signup.body.token, domain: 'paging.example' });
      const existing: string[] = [];
      for (let i = 0; i < 38; i++) existing.push(await sendOne(app, fresh.key, { to: `p${i}@example.org`, fromEmail: fresh.from, subject: 'Paging' }));
      const pagingAccount = (await untilSent(app, existing.slice(0, 1)))[0].account_id;
      // twelve messages with one identical createdAt: the id breaks the tie, so none is skipped or repeated
      const tied = new Date().toISOString();
      for (let i = 0; i < 12; i++) existing.push(await queueDirect(app, { accountId: pagingAccount, apiKeyId: fresh.keyId, queuedAt: tied, to: `tie${i}@example.org` }));
      await eventually(() => list('?limit=100', { apiKey: fresh.key }), (r) => r.body.items.length === 50);

      const arriving: Promise<string>[] = [];
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: any = await list(`?limit=10${cursor ? `&cursor=${cursor}` : ''}`, { apiKey: fresh.key });
        expect(res.status).to.equal(200);
        seen.push(...ids(res));
        cursor = res.body.nextCursor;
        pages++;
        // new messages land while the caller is between pages
        for (let i = 0; i < 3; i++) arriving.push(sendOne(app, fresh.key, { to: `new${pages}-${i}@example.org`, fromEmail: fresh.from, subject: 'Arriving' }));
        await untilSent(app, await Promise.all(arriving));
      } while (cursor);
      expect(pages).to.equal(5);
      expect(new Set(seen).size).to.equal(seen.length);
      expect(seen.filter((id) => existing.includes(id)).sort()).to.deep.equal([...existing].sort());
      expect(seen).to.have.length(50);
    });
  });

  describe('GET /api/messages/:id', () => {
    it('the message with its bodies and its timeline oldest first; an API key gets no contact or campaign keys', async () => {
      const res = await app.request('GET', `/api/messages/${a[3]}`, { apiKey: keyA });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: a[3], status: 'delivered', to: 'alice3@example.org', opens: 2, clicks: 1, text: 'Hi' });
      // the full message: its bodies as queued (the html with its tracking)
      expect(res.body.html).to.be.a('string').and.include('<p>Hi</p>');
      expect(res.body.events.map((e: any) => e.type)).to.deep.equal(['sent', 'delivered', 'opened', 'opened', 'clicked']);
      const times = res.body.events.map((e: any) => e.occurredAt);
      expect(times).to.deep.equal([...times].sort());
      expect(res.body.events[4].data).to.include({ url: 'https://example.com/' });
      expect(res.body).to.not.have.any.keys('contact', 'campaign');
      const bounced = await app.request('GET', `/api/messages/${a[1]}`, { apiKey: keyA });
      expect(bounced.body.events.map((e: any) => e.type)).to.deep.equal(['sent', 'bounced']);
      const complained = await app.request('GET', `/api/messages/${a[2]}`, { apiKey: keyA });
      expect(complained.body.events.map((e: any) => e.type)).to.deep.equal(['sent', 'delivered', 'complained']);
    });

    it('a JWT also gets the joined contact (or null) and campaign', async () => {
      const contact = await app.request('POST', '/api/contacts', { token: app.adminToken, body: { email: 'alice5@example.org', firstName: 'Alice', lastName: 'Five' } });
      expect(contact.status).to.equal(201);
      const res = await eventually(
        () => app.request('GET', `/api/messages/${a[5]}`, jwt()),
        (r) => r.body.contact !== null,
      );
      expect(res.body.contact).to.include({ email: 'alice5@example.org', firstName: 'Alice', lastName: 'Five' });
      expect(res.body).to.have.property('campaign', null);
      const withoutContact = await app.request('GET', `/api/messages/${a[6]}`, jwt());
      expect(withoutContact.body).to.include({ contact: null, campaign: null });
      // the key that sent it still never sees the contact's names
      expect((await app.request('GET', `/api/messages/${a[5]}`, { apiKey: keyA })).body).to.not.have.any.keys('contact', 'campaign');
    });

    it("another key's or another account's message, an unknown or malformed id → 404", async () => {
      const notFound = (res: { status: number; body: any }) => {
        expect(res.status).to.equal(404);
        expect(res.body).to.include({ error: 'Not Found', statusCode: 404 });
      };
      notFound(await app.request('GET', `/api/messages/${a[0]}`, { apiKey: keyB }));
      notFound(await app.request('GET', `/api/messages/${a[0]}`, { apiKey: keyC }));
      notFound(await app.request('GET', `/api/messages/${a[0]}`, { token: otherToken }));
      notFound(await app.request('GET', '/api/messages/nosuchmessage', jwt()));
      notFound(await app.request('GET', '/api/messages/a%00b', jwt()));
      expect((await app.request('GET', `/api/messages/${b[0]}`, jwt())).status).to.equal(200);
    });
  });

  describe('GET /api/messages/aggregate', () => {
    const aggregate = (query: string, auth: { token?: string; apiKey?: string } = jwt()) => app.request('GET', `/api/messages/aggregate${query}`, auth);

    it('{total, status, opens, clicks} for the account, a key, and the list filters', async () => {
      const all = await aggregate('');
      expect(all.status).to.equal(200);
      expect(all.body).to.deep.equal({
        total: 28,
        status: { scheduled: 0, queued: 0, sent: 23, delivered: 3, bounced: 1, complained: 1, failed: 0, cancelled: 0 },
        opens: { unique: 2, total: 3 },
        clicks: { unique: 1, total: 1 },
      });
      expect((await aggregate('', { apiKey: keyB })).body).to.deep.include({ total: 8, opens: { unique: 1, total: 1 } });
      expect((await aggregate('?status=delivered')).body.total).to.equal(3);
      expect((await aggregate('?search=bob')).body.total).to.equal(8);
      expect((await aggregate(`?from=2999-01-01T00:00:00Z`)).body.total).to.equal(0);
      expect((await aggregate('', { token: otherToken })).body.total).to.equal(2);
    });

    it('subject is an exact match; campaignId counts one campaign; bad filters → 400', async () => {
      expect((await aggregate(`?subject=${encodeURIComponent('Invoice 3')}`)).body).to.deep.include({ total: 1, opens: { unique: 1, total: 2 }, clicks: { unique: 1, total: 1 } });
      expect((await aggregate('?subject=Invoice')).body.total).to.equal(0);
      const campaign = [];
      for (let i = 0; i < 6; i++) campaign.push(await queueDirect(app, { accountId, campaignId: 'spring-sale', to: `fan${i}@example.org`, subject: 'Spring' }));
      await untilSent(app, campaign);
      await recordOutcome(app, campaign[0], 'Delivered');
      await recordOutcome(app, campaign[0], 'Opened');
      await recordOutcome(app, campaign[1], 'Bounced');
      await recordOutcome(app, campaign[2], 'Clicked', { suspectedBot: true });
      const res = await eventually(
        () => aggregate('?campaignId=spring-sale'),
        (r) => r.body.status.bounced === 1 && r.body.opens.total === 1,
      );
      expect(res.body).to.deep.equal({
        total: 6,
        status: { scheduled: 0, queued: 0, sent: 4, delivered: 1, bounced: 1, complained: 0, failed: 0, cancelled: 0 },
        opens: { unique: 1, total: 1 },
        clicks: { unique: 0, total: 0 },
      });
      // the campaign's messages were not sent by key A
      expect((await aggregate('?campaignId=spring-sale', { apiKey: keyA })).body.total).to.equal(0);
      expect((await aggregate('?campaignId=spring-sale', { token: otherToken })).body.total).to.equal(0);
      expect((await aggregate('?status=nope')).status).to.equal(400);
      expect((await aggregate('?from=tuesday')).status).to.equal(400);
    });
  });

  describe('audit: GET /api/messages/:id/history and npm run replay', () => {
    it('every event of the stream with time, actor, metadata and the state it led to (JWT only)', async () => {
      const res = await app.request('GET', `/api/messages/${a[2]}/history`, jwt());
      expect(res.status).to.equal(200);
      expect(res.body.map((e: any) => [e.type, e.version, e.state.status])).to.deep.equal([
        ['EmailQueued', 0, 'queued'],
        ['ProviderAccepted', 1, 'sent'],
        ['Delivered', 2, 'delivered'],
        ['Complained', 3, 'complained'],
      ]);
      expect(res.body[0].actor).to.equal(`apikey:${keyAId}`);
      expect(res.body[3].actor).to.equal('system:test-provider');
      expect(res.body[0].metadata).to.have.property('commandId');
      expect(res.body[0].data).to.include({ to: 'alice2@example.org', accountId });
      expect(res.body[1].state).to.include({ providerMessageId: `sandbox-${a[2]}`, attempts: 1 });
      expect(new Date(res.body[0].occurredAt).toISOString()).to.equal(res.body[0].occurredAt);

      // a dashboard route: an API key, even one with read_events, is refused
      expect((await app.request('GET', `/api/messages/${a[2]}/history`, { apiKey: keyA })).status).to.be.oneOf([401, 403]);
      expect((await app.request('GET', `/api/messages/${a[2]}/history`, { token: otherToken })).status).to.equal(404);
      expect((await app.request('GET', '/api/messages/nosuchmessage/history', jwt())).status).to.equal(404);
    });

    it('formatReplay prints each event with time, actor, metadata and state; the script prints the same', async () => {
      const lines = await formatReplay(app.infra.eventStore, a[1]);
      expect(lines[0]).to.equal(`Message ${a[1]}: 3 events`);
      expect(lines[1]).to.match(/^#0 \d{4}-\d\d-\d\dT[\d:.]+Z EmailQueued by apikey:/);
      expect(lines[5]).to.match(/^#1 .* ProviderAccepted by system:/);
      expect(lines[9]).to.match(/^#2 .* Bounced by system:test-provider$/);
      expect(lines[10]).to.include('"bounceType":"hard"');
      expect(lines[11]).to.match(/^ {4}metadata: \{.*"commandId":/);
      expect(lines[12]).to.include('"status":"bounced"');
      expect(await formatReplay(app.infra.eventStore, 'nosuchmessage')).to.deep.equal(['No events for message nosuchmessage.']);

      const script = await runScript(app, 'replay', [a[1]]);
      expect(script.code, script.stderr).to.equal(0);
      expect(script.stdout.trimEnd().split('\n')).to.deep.equal(lines);
      const missing = await runScript(app, 'replay', ['nosuchmessage']);
      expect(missing.code).to.equal(1);
    });
  });

  // last: it sends one more message, which the counts above do not expect
  describe('reading one\'s own send at once', () => {
    it('GET /api/messages/:id right after the 201 answers the message, waiting for the read model when it trails; another key still gets 404', async () => {
      // the messages read model held back, as on a busy machine: its checkpoint row locked, so a batch cannot commit
      const hold = await app.infra.db.transaction();
      try {
        await hold('projection_checkpoints').where({ name: 'messages' }).forUpdate().select('name');
        const id = await sendOne(app, keyA, { to: 'just-now@example.org', fromEmail: 'app@example.com', subject: 'Right away' });
        const mine = app.request('GET', `/api/messages/${id}`, { apiKey: keyA });
        const theirs = app.request('GET', `/api/messages/${id}`, { apiKey: keyB });
        await new Promise((r) => setTimeout(r, 300));
        expect(await app.infra.db('messages').where({ id }).first()).to.equal(undefined);
        await hold.commit();
        const res = await mine;
        expect(res.status).to.equal(200);
        expect(res.body).to.include({ id, to: 'just-now@example.org', subject: 'Right away' });
        expect((await theirs).status).to.equal(404);
      } finally {
        if (!hold.isCompleted()) await hold.rollback();
      }
    });
  });
});
