import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

describe('tags and metadata on a send: stored, returned, filterable', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let from: string;
  const ids: Record<string, string> = {};
  const send = (body: Record<string, unknown>) =>
    app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'reader@example.org', fromEmail: from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi', ...body } });
  const list = (query: string) => app.request('GET', `/api/messages${query}`, { apiKey: key });
  const aggregate = (query: string) => app.request('GET', `/api/messages/aggregate${query}`, { apiKey: key });
  const listed = async (query: string) => ((await list(query)).body.items as { id: string }[]).map((m) => m.id).sort();
  const named = (...names: string[]) => names.map((n) => ids[n]).sort();

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
    const bodies: Record<string, Record<string, unknown>> = {
      receipt: { tags: ['receipt', 'eu:west'], metadata: { orderId: '1042', plan: 'pro' } },
      receipt2: { tags: ['receipt'], metadata: { orderId: '1043', plan: 'pro' } },
      plain: {},
    };
    for (const [name, body] of Object.entries(bodies)) {
      const res = await send(body);
      expect(res.status).to.equal(201);
      ids[name] = res.body.messageLogId;
    }
    await eventually(() => app.infra.db('messages').whereIn('id', Object.values(ids)), (rows) => rows.length === 3);
  });
  after(async () => app?.close());

  it('list and detail return tags and metadata; a message without them shows none', async () => {
    const detail = await app.request('GET', `/api/messages/${ids.receipt}`, { apiKey: key });
    expect(detail.body).to.deep.include({ tags: ['receipt', 'eu:west'], metadata: { orderId: '1042', plan: 'pro' } });
    const items = (await list('')).body.items;
    expect(items.find((m: { id: string }) => m.id === ids.receipt2)).to.deep.include({ tags: ['receipt'], metadata: { orderId: '1043', plan: 'pro' } });
    expect(items.find((m: { id: string }) => m.id === ids.plain)).to.deep.include({ tags: [], metadata: {} });
  });

  it('GET /api/messages filters by tag= (repeated: all of them) and metadata[key]=value', async () => {
    expect(await listed('?tag=receipt')).to.deep.equal(named('receipt', 'receipt2'));
    expect(await listed('?tag=receipt&tag=eu:west')).to.deep.equal(named('receipt'));
    expect(await listed('?metadata[plan]=pro')).to.deep.equal(named('receipt', 'receipt2'));
    expect(await listed('?metadata[plan]=pro&metadata[orderId]=1043')).to.deep.equal(named('receipt2'));
    expect(await listed(`?tag=receipt&${encodeURIComponent('metadata[orderId]')}=1042`)).to.deep.equal(named('receipt'));
    expect(await listed('?tag=nothing')).to.deep.equal([]);
  });

  it('/api/messages/aggregate counts with the same filters', async () => {
    expect((await aggregate('?tag=receipt')).body.total).to.equal(2);
    expect((await aggregate('?metadata[orderId]=1042')).body.total).to.equal(1);
    expect((await aggregate('?tag=eu:west&metadata[orderId]=1043')).body.total).to.equal(0);
    expect((await aggregate('')).body.total).to.equal(3);
  });

  it('400 naming the field and the limit for bad tags and metadata on a send', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ tags: ['has space'] }, 'tags.0: a tag is 1 to 64 characters of A-Z a-z 0-9 _ : -'],
      [{ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, 'tags: tags holds at most 10 tags'],
      [{ tags: ['x'.repeat(65)] }, 'tags.0: a tag is 1 to 64 characters of A-Z a-z 0-9 _ : -'],
      [{ metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata: metadata holds at most 20 keys'],
      [{ metadata: { note: 'x'.repeat(257) } }, 'metadata.note: a metadata value is at most 256 characters'],
      [{ metadata: { n: 1 } }, 'metadata.n: Invalid input: expected string, received number'],
      [{ metadata: { msg_id: 'mine' } }, 'metadata.msg_id: metadata key msg_id is reserved'],
    ];
    for (const [body, message] of cases) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
      expect(res.body.message).to.equal(message);
    }
    const longKey = await send({ metadata: { ['k'.repeat(257)]: 'v' } });
    expect(longKey.body.message).to.equal(`metadata.${'k'.repeat(257)}: a metadata key is 1 to 256 characters`);
    expect((await send({ metadata: { '': 'v' } })).body.message).to.equal('metadata.: a metadata key is 1 to 256 characters');
    // the limits themselves are accepted: 20 keys, a key and a value of 256 characters
    const atLimit = await send({
      tags: Array.from({ length: 10 }, (_, i) => `t${i}`),
      metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [i === 0 ? 'k'.repeat(256) : `k${i}`, 'v'.repeat(256)])),
    });
    expect(atLimit.status, JSON.stringify(atLimit.body)).to.equal(201);
  });

  it('400 for a bad tag or metadata filter', async () => {
    const space = await list('?tag=has%20space');
    expect(space.status).to.equal(400);
    expect(space.body.message).to.equal('tag: a tag is 1 to 64 characters of A-Z a-z 0-9 _ : -');
    const long = await list(`?metadata[k]=${'x'.repeat(257)}`);
    expect(long.status).to.equal(400);
    expect(long.body.message).to.equal('metadata[k]: a metadata value is at most 256 characters');
    const twice = await aggregate('?metadata[k]=a&metadata[k]=b');
    expect(twice.status).to.equal(400);
    expect(twice.body.message).to.equal('metadata[k]: give one value per metadata key');
  });

  it('more than 10 tags: 400 naming the limit on the list and the aggregate, with every bad tag listed too', async () => {
    const tags = (names: string[]) => `?${names.map((t) => `tag=${encodeURIComponent(t)}`).join('&')}`;
    const eleven = Array.from({ length: 11 }, (_, i) => `t${i}`);
    for (const res of [await list(tags(eleven)), await aggregate(tags(eleven))]) {
      expect([res.status, res.body.message]).to.deep.equal([400, 'tag: filter on at most 10 tags']);
      expect(res.body.issues).to.deep.equal([{ field: 'tag', message: 'filter on at most 10 tags' }]);
    }
    const bad = await list(tags([...eleven.slice(1), 'has space']));
    expect(bad.body.issues).to.deep.equal([
      { field: 'tag.10', message: 'a tag is 1 to 64 characters of A-Z a-z 0-9 _ : -' },
      { field: 'tag', message: 'filter on at most 10 tags' },
    ]);
    expect((await list(tags(eleven.slice(1)))).status).to.equal(200);
  });

  it('a tag or metadata filter sent in another form is refused, not ignored: every message would be answered', async () => {
    const TAG = 'several tags are sent as tag repeated, without brackets: tag=a&tag=b';
    const METADATA = 'a metadata filter is sent as metadata[<key>]=<value>, its key in the brackets';
    const cases: [string, { field: string; message: string }[]][] = [
      ['?tag[]=receipt', [{ field: 'tag[]', message: TAG }]],
      ['?tag[0]=receipt&tag[1]=eu:west', [{ field: 'tag[0]', message: TAG }, { field: 'tag[1]', message: TAG }]],
      ['?tag%5B%5D=receipt', [{ field: 'tag[]', message: TAG }]],
      ['?metadata=1', [{ field: 'metadata', message: METADATA }]],
      ['?metadata[]=1', [{ field: 'metadata[]', message: METADATA }]],
      ['?metadata.plan=pro', [{ field: 'metadata.plan', message: METADATA }]],
      // listed with the query's other problems, in one answer
      ['?tag[]=receipt&metadata=1&search=a&search=b&metadata[k]=a&metadata[k]=b', [
        { field: 'search', message: 'Invalid input: expected string, received array' },
        { field: 'tag[]', message: TAG },
        { field: 'metadata', message: METADATA },
        { field: 'metadata[k]', message: 'give one value per metadata key' },
      ]],
    ];
    for (const [query, issues] of cases) {
      for (const res of [await list(query), await aggregate(query)]) {
        expect([res.status, res.body.message], query).to.deep.equal([400, `${issues[0].field}: ${issues[0].message}`]);
        expect(res.body.issues, query).to.deep.equal(issues);
      }
    }
    const chart = await app.request('GET', '/api/messages/timeseries?tag[]=receipt', { apiKey: key });
    expect([chart.status, chart.body.issues]).to.deep.equal([400, [{ field: 'tag[]', message: TAG }]]);
    const bare = await app.request('GET', '/api/messages/timeseries?metadata=1', { apiKey: key });
    expect([bare.status, bare.body.issues]).to.deep.equal([400, [{ field: 'metadata', message: METADATA }]]);
  });

  describe('a metadata key is any text of 1 to 256 characters', () => {
    const entries = { 'order id': 'A 1', 'Größe': 'XL', '注文': 'é', 'a=b': 'c', '50% [x]&y+z': 'v=w' };
    let id: string;
    const q = (key: string, value: string) => `${encodeURIComponent(`metadata[${key}]`)}=${encodeURIComponent(value)}`;
    before(async () => {
      const res = await send({ metadata: entries });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      id = res.body.messageLogId;
      await eventually(() => app.infra.db('messages').where({ id }), (rows) => rows.length === 1);
    });

    it('is stored and returned by detail and list as sent', async () => {
      expect((await app.request('GET', `/api/messages/${id}`, { apiKey: key })).body.metadata).to.deep.equal(entries);
      const items = (await list(`?${q('Größe', 'XL')}`)).body.items;
      expect(items.map((m: { id: string; metadata: unknown }) => [m.id, m.metadata])).to.deep.equal([[id, entries]]);
    });

    it('filters the list, the aggregate and the chart, its key URL-encoded', async () => {
      for (const [k, v] of Object.entries(entries)) {
        expect(await listed(`?${q(k, v)}`), k).to.deep.equal([id]);
        expect((await aggregate(`?${q(k, v)}`)).body.total, k).to.equal(1);
      }
      // key `a` with value `b=c` is not key `a=b` with value `c`
      expect(await listed(`?${q('a', 'b=c')}`)).to.deep.equal([]);
      expect(await listed(`?${q('order id', 'A 1')}&${q('注文', 'é')}`)).to.deep.equal([id]);
      const sent = (query: string) => app.request('GET', `/api/messages/timeseries?interval=hour&${query}`, { apiKey: key });
      const total = (r: { body: { buckets: { sent: number }[] } }) => r.body.buckets.reduce((n, b) => n + b.sent, 0);
      for (const [k, v] of Object.entries(entries)) {
        expect(total(await eventually(() => sent(q(k, v)), (r) => total(r) > 0)), k).to.equal(1);
      }
      expect(total(await sent(q('a', 'b=c')))).to.equal(0);
    });

    it('__proto__ is refused with why, on a send, in a batch and as a filter; it was accepted and lost', async () => {
      const why = "metadata key __proto__ cannot be kept: it is not a plain object key in JavaScript (it names the object's prototype)";
      const body = JSON.stringify({ to: 'reader@example.org', fromEmail: from, subject: 'Hi', html: '<p>Hi</p>', text: 'Hi', metadata: { plan: 'pro' } }).replace('"plan"', '"__proto__"');
      const one = await app.request('POST', '/api/send/transactional', { apiKey: key, body });
      expect([one.status, one.body.message]).to.deep.equal([400, `metadata.__proto__: ${why}`]);
      const batch = await app.request('POST', '/api/send/batch', { apiKey: key, body: `{"messages":[${body}]}` });
      expect(batch.body.items[0]).to.deep.include({ status: 400, message: `metadata.__proto__: ${why}` });
      const filter = await list(`?${q('__proto__', 'x')}`);
      expect([filter.status, filter.body.message]).to.deep.equal([400, `metadata[__proto__]: ${why}`]);
    });
  });
});
