import { performance } from 'node:perf_hooks';
import { startTestApp } from '../../test/support/app.js';
import { call, measureLatency, scaled, type BenchModule } from './lib.js';

const BATCH = 500;
/** parallel import requests, as a sync job with a few workers would send them */
const CONCURRENCY = 4;
const COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Tyrell'];

const contact = (i: number) => ({
  email: `person${i}@example${i % 50}.org`,
  firstName: `First${i}`,
  lastName: `Last${i % 997}`,
  company: COMPANIES[i % COMPANIES.length],
  tags: i % 3 === 0 ? ['vip'] : ['newsletter'],
});

async function inBatches(total: number, op: (from: number, to: number) => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let from = next; from < total; from = next) {
        next += BATCH;
        await op(from, Math.min(from + BATCH, total));
      }
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

/**
 * Issue 8: bulk import through HTTP (batches of 500, the recommended size) against the floor of
 * plain multi-row INSERTs of the same rows into a table shaped like the read model, then list
 * searches at that size.
 */
const bench: BenchModule = {
  name: 'contacts import and list',
  async run({ scale, log }) {
    const total = scaled(100_000, scale, BATCH);
    const app = await startTestApp();
    try {
      const db = app.infra.db;
      await db.schema.createTable('bench_contacts', (t) => {
        t.text('id').primary();
        t.text('account_id').notNullable();
        t.text('email').notNullable();
        t.text('first_name');
        t.text('last_name');
        t.text('company');
        t.specificType('tags', 'text[]').notNullable();
        t.text('status').notNullable();
        t.specificType('list_ids', 'text[]').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.unique(['account_id', 'email']);
      });
      const baseline = await inBatches(total, async (from, to) => {
        const now = new Date();
        const rows = [];
        for (let i = from; i < to; i++) {
          const c = contact(i);
          rows.push({ id: `b${i}`, account_id: 'a', email: c.email, first_name: c.firstName, last_name: c.lastName, company: c.company, tags: c.tags, status: 'subscribed', list_ids: ['list-1'], created_at: now });
        }
        await db('bench_contacts').insert(rows);
      });
      log(`baseline: ${Math.round(baseline)} rows/s (multi-row INSERT, ${total} rows)`);

      const { key } = await app.createApiKey(['contacts:read', 'contacts:write']);
      const headers = { 'x-api-key': key };
      const imported = await inBatches(total, async (from, to) => {
        const contacts = Array.from({ length: to - from }, (_, k) => contact(from + k));
        const res = await call(app.baseUrl, 'POST', '/api/contacts/import', { headers, body: { contacts, listId: 'list-1' } });
        if (res.status !== 200 || res.body.created !== to - from) throw new Error(`import answered ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      });
      log(`import: ${Math.round(imported)} contacts/s (${total} contacts)`);

      const again = await inBatches(total, async (from, to) => {
        const contacts = Array.from({ length: to - from }, (_, k) => contact(from + k));
        const res = await call(app.baseUrl, 'POST', '/api/contacts/import', { headers, body: { contacts, listId: 'list-1' } });
        if (res.status !== 200 || res.body.unchanged !== to - from) throw new Error(`re-import answered ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      });
      log(`re-import (idempotent, all unchanged): ${Math.round(again)} contacts/s`);

      const searches = ['person4242', 'Last17', 'globex', 'example7.org', 'First99'];
      const list = await measureLatency(async (i) => {
        const res = await call(app.baseUrl, 'GET', `/api/contacts?search=${searches[i % searches.length]}&limit=25&page=2`, { headers });
        if (res.status !== 200) throw new Error(`list answered ${res.status}`);
      });
      const plain = await measureLatency(async (i) => {
        const res = await call(app.baseUrl, 'GET', `/api/contacts?page=${(i % 20) + 1}&tag=vip`, { headers });
        if (res.status !== 200) throw new Error(`list answered ${res.status}`);
      });
      log(`list search p50 ${list.p50.toFixed(1)} ms p99 ${list.p99.toFixed(1)} ms; tag filter p99 ${plain.p99.toFixed(1)} ms`);
      return [
        { name: `import ${total} contacts, batches of ${BATCH} over HTTP`, value: imported, unit: 'contacts/s', baseline: { name: 'multi-row INSERT into a similar table', value: baseline }, aim: '≥ 5,000 contacts/s' },
        { name: 'idempotent re-import of the same batches', value: again, unit: 'contacts/s', baseline: { name: 'multi-row INSERT into a similar table', value: baseline } },
        { name: `list search p99 at ${total} contacts`, value: list.p99, unit: 'ms', baseline: { name: 'list search p50', value: list.p50 } },
        { name: `list tag filter p99 at ${total} contacts`, value: plain.p99, unit: 'ms' },
      ];
    } finally {
      await app.close();
    }
  },
};
export default bench;
