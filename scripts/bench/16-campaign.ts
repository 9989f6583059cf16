import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.js';
import { spawnServer } from '../../test/support/spawn-server.js';
import { call, measureClosedLoop, measureLatency, percentiles, scaled, type BenchFigure, type BenchModule, prepareSendBench, BENCH_ADMIN } from './lib.js';

/**
 * The CPU time a process has used so far (Linux /proc, in clock ticks of 1/100 s), or null elsewhere.
 * On a machine other work shares, time on the CPU says what the service costs where wall time cannot.
 */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    // the fields after the command name, which is in parentheses and may hold spaces
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
const IMPORT_BATCH = 5_000;

/**
 * The p99 of the time from each send's 201 to its arrival at the (sandbox) provider, once all have
 * arrived (at most 5 min): the provider's row is stamped by the same machine's clock.
 */
async function timeToProvider(testDb: TestDatabase, sends: { id: string; acceptedAt: number }[]): Promise<number> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await testDb.db.raw('SELECT message_id, (extract(epoch FROM created_at) * 1000)::float8 AS at FROM sandbox_emails WHERE message_id = ANY(?)', [sends.map((s) => s.id)]);
    if (rows.length === sends.length) {
      const arrived = new Map<string, number>(rows.map((r: { message_id: string; at: number }) => [r.message_id, r.at]));
      return percentiles(sends.map((s) => arrived.get(s.id)! - s.acceptedAt)).p99;
    }
    if (Date.now() > deadline) throw new Error(`${sends.length - rows.length} of ${sends.length} transactional sends not at the provider after 5 min`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Where the followed sends' time to the provider went, p50 / p99 of each stage, from the times the
 * database recorded (each a transaction's start): the append of EmailQueued, the send process
 * manager's recording of the side effect, the provider's record of the call (the sandbox's row), and
 * the append of ProviderAccepted.
 */
async function stagesToProvider(testDb: TestDatabase, ids: string[]): Promise<string> {
  const { rows } = await testDb.db.raw(
    `SELECT (SELECT extract(epoch FROM recorded_at) FROM events WHERE stream_id = 'message-' || m.id AND type = 'EmailQueued') * 1000 AS queued,
            (SELECT extract(epoch FROM created_at) FROM side_effects WHERE id = 'send:' || m.id) * 1000 AS effect,
            (SELECT extract(epoch FROM created_at) FROM sandbox_emails WHERE message_id = m.id) * 1000 AS provider,
            (SELECT extract(epoch FROM recorded_at) FROM events WHERE stream_id = 'message-' || m.id AND type = 'ProviderAccepted') * 1000 AS accepted
     FROM unnest(?::text[]) AS m (id)`,
    [ids],
  );
  const stage = (from: string, to: string) => {
    const { p50, p99 } = percentiles(rows.map((r: Record<string, string>) => Number(r[to]) - Number(r[from])));
    return `${from} → ${to} ${p50.toFixed(0)} / ${p99.toFixed(0)} ms`;
  };
  return `${stage('queued', 'effect')}, ${stage('effect', 'provider')}, ${stage('provider', 'accepted')} (p50 / p99)`;
}

/** How the service runs: `npm start`'s one process, or an API process beside a worker process. */
type Topology = 'all' | 'api+worker';

/**
 * Issue 27, campaigns: how fast a campaign to 100,000 contacts has every message queued (against the
 * same run's transactional send rate, the send module's figure), and the transactional send p99 while
 * it fans out against the same sends' p99 on an idle service. Measured twice, once per topology: in
 * the `all` role the workers run on a thread of their own below the API's priority; with an API and
 * a worker process the operating system shares the cores between the two processes.
 */
async function campaignRun(topology: Topology, contacts: number, scale: number, log: (line: string) => void) {
  const testDb = await createTestDatabase();
  const env = { DATABASE_URL: testDb.url, ADMIN_EMAIL: BENCH_ADMIN.email, ADMIN_PASSWORD: BENCH_ADMIN.password };
  // a loaded machine can take longer than the default 30 s to start the service
  const server = await spawnServer(topology === 'all' ? 'all' : 'api', env, { startTimeoutMs: 120_000 });
  const worker = topology === 'all' ? null : await spawnServer('worker', env, { startTimeoutMs: 120_000 });
  const processes = [server, ...(worker ? [worker] : [])];
  try {
    const base = server.baseUrl;
    const { headers, auth } = await prepareSendBench(base, BENCH_ADMIN);
    let n = 0;
    /** the one sender's sends being followed to the provider: message id and when its 201 came */
    let followed: { id: string; acceptedAt: number }[] | null = null;
    const send = async () => {
      const res = await call(base, 'POST', '/api/send/transactional', {
        headers,
        body: { to: `reset${n++}@example.org`, fromEmail: 'app@bench.example.com', subject: 'Reset your password', html: '<p>reset</p>', text: 'reset' },
      });
      if (res.status !== 201) throw new Error(`a send was refused: ${res.status} ${JSON.stringify(res.body)}`);
      followed?.push({ id: res.body.messageLogId, acceptedAt: Date.now() });
    };

    // Baselines on the idle service: the send rate (as the send module measures it), one sender's p99,
    // and the p99 of that sender's time from a 201 to the provider.
    const baseline = await measureClosedLoop(send, { count: scaled(5_000, scale, 500), concurrency: 50 });
    await new Promise((r) => setTimeout(r, 5_000)); // the burst's sends delivered before the idle ones
    followed = [];
    // 2,000 sends: with 300 the idle p99 was the third-slowest send, and moved between runs from 25 to
    // 48 ms on its own (the sends during a campaign number thousands)
    const idle = await measureLatency(send, scaled(2_000, scale, 300));
    const idleToProvider = await timeToProvider(testDb, followed);
    log(`${topology}, idle: stages to the provider: ${await stagesToProvider(testDb, followed.map((f) => f.id))}`);
    log(`${topology}, idle: ${Math.round(baseline.perSecond)} transactional sends/s at 50 in flight; one sender's p99 ${idle.p99.toFixed(1)} ms, 201 to provider p99 ${idleToProvider.toFixed(0)} ms`);

    for (let i = 0; i < contacts; i += IMPORT_BATCH) {
      const batch = Array.from({ length: Math.min(IMPORT_BATCH, contacts - i) }, (_, j) => ({ email: `reader${i + j}@example.org`, firstName: `Reader ${i + j}` }));
      let res = await call(base, 'POST', '/api/contacts/import', { headers: auth, body: { contacts: batch, listId: 'everyone' } });
      // 503: the contacts read model is still catching up with the previous batch (a loaded machine)
      for (let tries = 0; res.status === 503 && tries < 30; tries++) {
        await new Promise((r) => setTimeout(r, 1_000));
        res = await call(base, 'POST', '/api/contacts/import', { headers: auth, body: { contacts: batch, listId: 'everyone' } });
      }
      if (res.status !== 200) throw new Error(`import refused: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const template = await call(base, 'POST', '/api/templates', { headers: auth, body: { name: 'news', subject: 'News for {{firstName}}', html: '<p>Hello {{firstName}}</p>', text: 'Hello {{firstName}}' } });
    const campaign = await call(base, 'POST', '/api/campaigns', {
      headers: auth,
      body: { name: 'bench', templateId: template.body.id, fromEmail: 'app@bench.example.com', audience: { listId: 'everyone' } },
    });
    const cpuOfService = () => {
      const each = processes.map((p) => cpuSeconds(p.process.pid));
      return each.includes(null) ? null : each.reduce((a, b) => a! + b!, 0);
    };
    const started = Date.now();
    const cpuAtStart = cpuOfService();
    const sent = await call(base, 'POST', `/api/campaigns/${campaign.body.id}/send`, { headers: auth, body: {} });
    if (sent.status !== 202) throw new Error(`send refused: ${sent.status} ${JSON.stringify(sent.body)}`);
    let queuedAllMs = 0;
    let cpuUsed = null as number | null; // set by the watch below
    // Progress is read as the dashboard reads it, every 2 s: a campaign's view counts its messages'
    // statuses, so reading it every 200 ms (as this module did) took a growing share of PostgreSQL as
    // the campaign grew. The end is the campaign's own finishedAt, on the same machine's clock.
    const watch = (async () => {
      for (;;) {
        const c = await call(base, 'GET', `/api/campaigns/${campaign.body.id}`, { headers: auth });
        if (c.body.progress.queued + c.body.progress.skipped >= contacts && c.body.finishedAt) {
          cpuUsed = cpuAtStart === null ? null : cpuOfService()! - cpuAtStart; // up to 2 s after the end
          queuedAllMs = Date.parse(c.body.finishedAt) - started;
          return;
        }
        if (Date.now() - started > 600_000) throw new Error(`campaign not queued in 10 min: ${JSON.stringify(c.body.progress)}`);
        await new Promise((r) => setTimeout(r, 2_000));
      }
    })();
    // one sender's transactional sends while the campaign fans out, for as long as it does
    const during: { at: number; ms: number }[] = [];
    followed = [];
    while (!queuedAllMs) {
      const at = Date.now();
      const t = performance.now();
      await send();
      during.push({ at, ms: performance.now() - t });
    }
    await watch;
    // the sends that began while the campaign was fanning out
    const duringP99 = percentiles(during.filter((d) => d.at < started + queuedAllMs).map((d) => d.ms)).p99;
    const rate = contacts / (queuedAllMs / 1000);
    const duringToProvider = await timeToProvider(testDb, followed);
    log(`${topology}: stages to the provider during the campaign: ${await stagesToProvider(testDb, followed.map((f) => f.id))}`);
    log(`${topology}: ${contacts} campaign messages queued in ${(queuedAllMs / 1000).toFixed(1)} s (${Math.round(rate)}/s); ${during.length} transactional sends meanwhile, p99 ${duringP99.toFixed(1)} ms, 201 to provider p99 ${duringToProvider.toFixed(0)} ms`);
    if (cpuUsed !== null) log(`${topology}: the service used ${cpuUsed.toFixed(1)} CPU-seconds meanwhile, ${((100 * cpuUsed) / (queuedAllMs / 1000)).toFixed(0)} % of one core`);
    const figures: BenchFigure[] = [
      {
        name: `${topology}: campaign of ${contacts} contacts, messages queued per second`,
        value: rate,
        unit: 'msg/s',
        baseline: { name: 'transactional sends/s, idle, 50 in flight', value: baseline.perSecond },
        aim: `all queued within 60 s (${Math.round(contacts / 60)}/s)`,
      },
      { name: `${topology}: campaign of ${contacts} contacts, all queued after`, value: queuedAllMs / 1000, unit: 's', aim: '≤ 60 s at 100,000' },
      // everything the service did meanwhile (its transactional sends, provider calls and read models too), per campaign message
      ...(cpuUsed !== null ? [{ name: `${topology}: service CPU time during the fan-out, per campaign message`, value: (1000 * cpuUsed) / contacts, unit: 'ms' }] : []),
      {
        name: `${topology}: transactional send p99 during the campaign`,
        value: duringP99,
        unit: 'ms',
        baseline: { name: 'transactional send p99, idle', value: idle.p99 },
        aim: '≤ 1.5×',
      },
      {
        name: `${topology}: transactional send, 201 to provider p99, during the campaign`,
        value: duringToProvider,
        unit: 'ms',
        baseline: { name: 'the same, idle', value: idleToProvider },
      },
    ];
    return figures;
  } finally {
    for (const p of processes) await p.stop();
    await testDb.drop();
  }
}

const bench: BenchModule = {
  name: 'campaign',
  async run({ scale, log }) {
    const contacts = scaled(100_000, scale, 1_000);
    const figures: BenchFigure[] = [];
    for (const topology of ['all', 'api+worker'] as const) figures.push(...(await campaignRun(topology, contacts, scale, log)));
    return figures;
  },
};
export default bench;
