import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';

/**
 * An Idempotency-Key keeps its request's answer for a day, and a batch's answer quotes the recipients
 * it refused (`<address> is suppressed`). Erasing such a recipient takes the address out of the answer
 * but keeps the record: a retry still answers the same statuses and message ids, and queues nothing.
 */
describe('erasing a person whose address an Idempotency-Key answer quotes', function () {
  this.timeout(90_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  // as the caller wrote it; the erasure below names it lower-cased
  const ADDRESS = 'Ida.Idempotent@Example.org';
  let first: Awaited<ReturnType<TestApp['request']>>;

  const message = (to: string) => ({ to, fromEmail: sender.from, subject: 's', html: '<p>h</p>', text: 't' });
  const sendBatch = () =>
    app.request('POST', '/api/send/batch', {
      apiKey: sender.key,
      body: { messages: [message(ADDRESS), message('kept.recipient@example.org')] },
      headers: { 'idempotency-key': 'batch-naming-a-person' },
    });
  const queuedCount = async () => Number((await app.infra.db('events').where({ type: 'EmailQueued' }).count({ n: '*' }).first())!.n);
  const dump = async () => (await promisify(execFile)('pg_dump', ['--no-owner', app.config.DATABASE_URL!], { maxBuffer: 256 * 1024 * 1024 })).stdout;

  before(async () => {
    app = await startTestApp();
    sender = await readyToSend(app);
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: ADDRESS } })).status).to.equal(201);
    first = await sendBatch();
  });
  after(async () => app?.close());

  it('the batch answer names the refused recipient, and is remembered (200)', async () => {
    expect(first.status, first.text).to.equal(200);
    expect(first.body.items[0]).to.deep.equal({ status: 400, message: `${ADDRESS} is suppressed`, error: 'Bad Request' });
    expect(first.body.items[1]).to.include({ status: 201, queued: true });
    const again = await sendBatch();
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.text).to.equal(first.text);
  });

  it('after the erasure the same request answers the same statuses and ids without the address, and queues nothing', async () => {
    const queued = await queuedCount();
    const erased = await app.request('DELETE', `/api/contacts/${encodeURIComponent(ADDRESS.toLowerCase())}?erase=true`, { token: app.adminToken });
    expect(erased.status, erased.text).to.equal(200);

    const again = await sendBatch();
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.items).to.deep.equal([{ status: 400, message: 'an erased address is suppressed', error: 'Bad Request' }, first.body.items[1]]);
    expect(again.text.toLowerCase()).not.to.include(ADDRESS.toLowerCase());
    expect(await queuedCount()).to.equal(queued);
  });

  it('the record stays; neither it nor anything else in a dump of the database holds the address', async () => {
    const records = await app.infra.db('idempotency_keys').select('key', app.infra.db.raw('response_body::text AS body'));
    expect(records.map((r) => r.key)).to.deep.equal(['batch-naming-a-person']);
    expect(records[0].body).to.include('an erased address is suppressed');
    const text = (await dump()).toLowerCase();
    const at = text.indexOf(ADDRESS.toLowerCase());
    expect(at, text.slice(Math.max(0, at - 300), at + 100)).to.equal(-1);
  });
});
