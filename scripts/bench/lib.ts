import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** One line of the bench report: a measured figure, and the baseline it is compared with in the same run. */
export interface BenchFigure {
  name: string;
  value: number;
  unit: string;
  /** same-run baseline, so the ratio means something on a noisy machine */
  baseline?: { name: string; value: number };
  /** the aim, as text ("≥ 1,000 events/s") */
  aim?: string;
}

export interface BenchModule {
  name: string;
  run(options: BenchOptions): Promise<BenchFigure[]>;
}

export interface BenchOptions {
  /** 1 = the sizes the issues name; smaller for a quick look (BENCH_SCALE=0.01) */
  scale: number;
  log(line: string): void;
}

/** Operations per second of `op` called by `concurrency` loops for `durationMs`. */
export async function measureRate(op: (i: number) => Promise<unknown>, options: { concurrency?: number; durationMs?: number; warmupMs?: number } = {}): Promise<number> {
  return (await measureRates({ op }, { ...options, rounds: 1, windowMs: options.durationMs ?? 3_000 })).op;
}

/**
 * Operations per second of each of `ops`, measured in alternating windows (a, b, a, b, ...) rather
 * than one after the other: these machines speed up and slow down by a third within a minute, and
 * alternating lets that weigh on every op alike, so the ratios between them hold where the rates do not.
 */
export async function measureRates<K extends string>(
  ops: Record<K, (i: number) => Promise<unknown>>,
  options: { concurrency?: number; rounds?: number; windowMs?: number; warmupMs?: number } = {},
): Promise<Record<K, number>> {
  const concurrency = options.concurrency ?? 32;
  const names = Object.keys(ops) as K[];
  const counters = new Map(names.map((name) => [name, 0]));
  const run = async (name: K, durationMs: number) => {
    let done = 0;
    const end = performance.now() + durationMs;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const i = counters.get(name)!;
          counters.set(name, i + 1);
          await ops[name](i);
          done++;
        }
      }),
    );
    return done;
  };
  for (const name of names) await run(name, options.warmupMs ?? 500);
  const totals = new Map(names.map((name) => [name, { done: 0, ms: 0 }]));
  for (let round = 0; round < (options.rounds ?? 6); round++) {
    for (const name of names) {
      const start = performance.now();
      const done = await run(name, options.windowMs ?? 500);
      const total = totals.get(name)!;
      total.done += done;
      total.ms += performance.now() - start;
    }
  }
  return Object.fromEntries(names.map((name) => [name, totals.get(name)!.done / (totals.get(name)!.ms / 1000)])) as Record<K, number>;
}

/** Operations per second of a fixed amount of work, run in `concurrency` parallel loops. */
export async function measureThroughput(total: number, op: (i: number) => Promise<unknown>, concurrency = 16): Promise<{ perSecond: number; seconds: number }> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) await op(i);
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { perSecond: total / seconds, seconds };
}

/**
 * `count` calls of `op` from `concurrency` loops, each starting its next call when its last one
 * answered (the closed loop of N waiting clients): the rate, the p50/p99 latency in ms, and when the
 * last call answered.
 */
export async function measureClosedLoop(op: (i: number) => Promise<unknown>, options: { count: number; concurrency: number }) {
  const latencies: number[] = [];
  let next = 0;
  let lastAnsweredAt = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let i = next++; i < options.count; i = next++) {
        const t = performance.now();
        await op(i);
        lastAnsweredAt = performance.now();
        latencies.push(lastAnsweredAt - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { perSecond: options.count / seconds, seconds, ...percentiles(latencies), lastAnsweredAt };
}

/** p50/p99 latency in ms of `iterations` sequential calls (after a few warm-up calls). */
export async function measureLatency(op: (i: number) => Promise<unknown>, iterations = 200): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(10, iterations); i++) await op(i);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await op(i);
    samples.push(performance.now() - t);
  }
  return percentiles(samples);
}

function percentiles(samples: number[]): { p50: number; p99: number } {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

// node:http with a keep-alive agent, not fetch: on these 2 cores undici's fetch costs the load
// generator ~3.7x the CPU per request (measured against a bare server: 4,000 vs 15,000 req/s), CPU
// taken from the server under test.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** A keep-alive JSON client for bench traffic. */
export function call(baseUrl: string, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers: Record<string, string | number> = { ...options.headers };
  if (payload !== undefined) {
    if (typeof options.body !== 'string') headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(baseUrl + path, { method, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? safeJson(text) : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function scaled(n: number, scale: number, min = 1): number {
  return Math.max(min, Math.round(n * scale));
}
