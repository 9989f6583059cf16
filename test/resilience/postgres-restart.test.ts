import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/adapters/db/embedded-postgres.js';
import { DATABASE_UNAVAILABLE } from '../../src/http/error-mapping.js';
import { deleteKeys, redisReachable } from '../support/redis.js';
import { freePort, spawnServer, type SpawnedServer } from '../support/spawn-server.js';

const ADMIN = { email: 'admin@localhost', password: 'restart-admin-password' };
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** how soon after the server is back every kind of request must be served again */
const RESUMED_WITHIN_MS = 10_000;

interface Answer {
  kind: string;
  at: number;
  status: number;
  body: unknown;
}

/**
 * A PostgreSQL server (of the test's own) restarted under an API and a worker process: every pooled,
 * LISTEN and lock connection they held ends at once, some of them between two statements of a
 * transaction. Before this was handled, an appending connection's 'error' event went unheard and ended
 * the API process (the chaos suite saw requests failing for a minute after its restart).
 */
for (const queue of ['pg-boss', 'BullMQ'] as const) {
  describe(`a PostgreSQL server restarted under an API and a worker (${queue})`, function () {
    this.timeout(240_000);
    let dir: string | undefined;
    let port: number;
    let postgres: EmbeddedPostgresHandle | undefined;
    let api: SpawnedServer | undefined;
    let worker: SpawnedServer | undefined;
    const prefix = `restart-${randomBytes(4).toString('hex')}`;
    const start = () => startEmbeddedPostgres({ dataDir: dir!, port, database: 'restart', persistent: true });

    before(async function () {
      if (queue === 'BullMQ' && !(await redisReachable(redisUrl))) {
        if (process.env.CI === 'true') throw new Error(`Redis is not reachable at ${redisUrl}, and CI needs this suite`);
        this.skip();
      }
      dir = mkdtempSync(join(tmpdir(), 'courier-restart-pg-'));
      port = await freePort();
      postgres = await start();
      const env = {
        DATABASE_URL: postgres.url,
        ...(queue === 'BullMQ' ? { REDIS_URL: redisUrl, REDIS_PREFIX: prefix } : {}),
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
      };
      const unset = queue === 'pg-boss' ? ['REDIS_URL'] : [];
      [api, worker] = await Promise.all([spawnServer('api', env, { startTimeoutMs: 90_000, unset }), spawnServer('worker', env, { unset })]);
    });
    after(async () => {
      await Promise.all([api?.stop(), worker?.stop()]);
      await postgres?.stop().catch(() => {});
      if (queue === 'BullMQ') await deleteKeys(redisUrl, prefix).catch(() => {});
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const request = async (method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) => {
      try {
        const res = await fetch(api!.baseUrl + path, {
          method,
          headers: { ...init.headers, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : undefined };
      } catch (err) {
        return { status: 0, body: String(err) };
      }
    };
    const until = async (what: string, call: () => Promise<{ status: number; body: any }>, ok: (r: { status: number; body: any }) => boolean, ms = 60_000) => {
      for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 200))) {
        const r = await call();
        if (ok(r)) return r;
        if (Date.now() > deadline) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    };
    const ok = (a: { status: number }) => a.status >= 200 && a.status < 300;

    it('answers 503 while it is down, and within seconds of its return serves every kind of request again and sends', async () => {
      const login = await until('login', () => request('POST', '/api/auth/login', { body: ADMIN }), (r) => r.status === 200);
      const auth = { authorization: `Bearer ${login.body.token}` };
      await until('domain', () => request('POST', '/api/domains', { headers: auth, body: { domain: 'restart.example.com' } }), (r) => r.status === 201 || r.status === 409);
      const key = (await until('key', () => request('POST', '/api/api-keys', { headers: auth, body: { name: 'k', scopes: ['send'] } }), (r) => r.status === 201)).body.key;
      let n = 0;
      // every store a request may touch: the send's admission, idempotency record and append; reads;
      // a write that waits for its read model; an import
      const kinds: Record<string, () => Promise<{ status: number; body: any }>> = {
        send: () => {
          const i = n++;
          return request('POST', '/api/send/transactional', {
            headers: { 'x-api-key': key, 'idempotency-key': `k${i}` },
            body: { to: `r${i}@example.net`, fromEmail: 'app@restart.example.com', subject: 's', html: '<p>h</p>', text: 't' },
          });
        },
        list: () => request('GET', '/api/messages?limit=5', { headers: auth }),
        suppress: () => request('POST', '/api/suppressions', { headers: auth, body: { email: `s${n++}@example.net` } }),
        import: () => request('POST', '/api/contacts/import', { headers: auth, body: { contacts: [{ email: `c${n++}@example.net` }] } }),
      };
      const answers: Answer[] = [];
      let running = true;
      const loops = Object.entries(kinds).flatMap(([kind, call]) =>
        Array.from({ length: 2 }, async () => {
          while (running) {
            const r = await call();
            answers.push({ kind, at: Date.now(), status: r.status, body: r.body });
            await new Promise((res) => setTimeout(res, 50));
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 2_000));
      await postgres!.stop();
      await new Promise((r) => setTimeout(r, 1_000));
      postgres = await start();
      const back = Date.now();
      await new Promise((r) => setTimeout(r, RESUMED_WITHIN_MS + 3_000));
      running = false;
      await Promise.all(loops);

      const exits = `API ${api!.process.exitCode ?? api!.process.signalCode}, worker ${worker!.process.exitCode ?? worker!.process.signalCode}`;
      expect(exits, api!.output().slice(-3000)).to.equal('API null, worker null');
      const refused = answers.filter((a) => a.at < back + RESUMED_WITHIN_MS && !ok(a));
      expect(refused.length, 'requests were made while the server was down').to.be.greaterThan(0);
      for (const a of refused) {
        expect(a.status, JSON.stringify(a)).to.equal(503);
        expect([DATABASE_UNAVAILABLE, 'the suppressions read model is not up to date yet; is a worker running?']).to.include((a.body as { message: string }).message);
      }
      const late = answers.filter((a) => a.at >= back + RESUMED_WITHIN_MS && !ok(a));
      expect(late, `still failing ${RESUMED_WITHIN_MS} ms after the server was back`).to.deep.equal([]);
      for (const kind of Object.keys(kinds)) {
        expect(answers.filter((a) => a.kind === kind && a.at >= back + RESUMED_WITHIN_MS && ok(a)).length, kind).to.be.greaterThan(0);
      }
      // the worker follows: a send accepted after the return goes out
      const lastSend = answers.filter((a) => a.kind === 'send' && ok(a)).at(-1)!;
      const id = (lastSend.body as { messageLogId: string }).messageLogId;
      await until('the last send', () => request('GET', `/api/messages/${id}`, { headers: auth }), (r) => r.status === 200 && r.body.status === 'sent', 30_000);
    });
  });
}
