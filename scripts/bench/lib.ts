import net from 'node:net';
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

/** The p50 and p99 of `samples` (sorted in place). */
export function percentiles(samples: number[]): { p50: number; p99: number } {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

// The load generator shares the 2 cores with the service it measures, so it must take as little of
// them as it can: undici's fetch cost ~3.7x the CPU of node:http per request (4,000 vs 15,000 req/s
// against a bare server), and node:http (ClientRequest, IncomingMessage streams, header checks) still
// took 0.098 ms of CPU per send, 8 % of the machine's CPU per send (from /proc, during the send
// bench). This client writes each request as one buffer on a kept-alive socket and reads only the
// status line and Content-Length, as wrk or autocannon do: 0.040 ms per send. A response without
// Content-Length (chunked) is refused, not guessed at.
interface PendingCall {
  resolve(value: { status: number; body: any }): void;
  reject(err: Error): void;
}

class KeptAliveSocket {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: PendingCall | undefined;
  /** a HEAD request: its response has headers only, whatever its Content-Length says */
  private bodyless = false;
  /** when its last response ended (the server closes a connection idle for its keep-alive timeout) */
  idleSince = 0;
  readonly socket: net.Socket;

  constructor(host: string, port: number, private readonly release: (s: KeptAliveSocket) => void, private readonly drop: (s: KeptAliveSocket) => void) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err: Error) => {
      this.drop(this);
      this.pending?.reject(err);
      this.pending = undefined;
    };
    this.socket.on('error', fail);
    this.socket.on('close', () => fail(new Error('connection closed by the server')));
  }

  send(request: Buffer, pending: PendingCall, bodyless: boolean) {
    this.pending = pending;
    this.bodyless = bodyless;
    this.socket.ref();
    this.socket.write(request);
  }

  private onData(chunk: Buffer) {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const headerEnd = this.buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const head = this.buffer.toString('latin1', 0, headerEnd);
    const status = Number(head.slice(9, 12));
    const length = this.bodyless || status === 204 || status === 304 ? ['', '0'] : /\r\ncontent-length:\s*(\d+)/i.exec(head);
    const pending = this.pending!;
    if (!length) {
      this.pending = undefined;
      this.socket.destroy();
      pending.reject(new Error(`response without Content-Length: ${head}`));
      return;
    }
    const total = headerEnd + 4 + Number(length[1]);
    if (this.buffer.length < total) return;
    const text = this.buffer.toString('utf8', headerEnd + 4, total);
    this.buffer = this.buffer.subarray(total);
    this.pending = undefined;
    // An idle socket must not keep the bench process alive.
    this.socket.unref();
    this.idleSince = Date.now();
    this.release(this);
    pending.resolve({ status, body: text ? safeJson(text) : undefined });
  }
}

/** idle sockets by base URL */
const pools = new Map<string, { host: string; hostname: string; port: number; idle: KeptAliveSocket[] }>();

function poolFor(baseUrl: string) {
  let pool = pools.get(baseUrl);
  if (!pool) {
    const url = new URL(baseUrl);
    pools.set(baseUrl, (pool = { host: url.host, hostname: url.hostname, port: Number(url.port || 80), idle: [] }));
  }
  return pool;
}

/** A keep-alive JSON client for bench traffic (one request at a time per socket, a socket per concurrent call). */
export function call(baseUrl: string, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  const pool = poolFor(baseUrl);
  const payload = options.body === undefined ? '' : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${pool.host}\r\n`;
  for (const [name, value] of Object.entries(options.headers ?? {})) head += `${name}: ${value}\r\n`;
  if (options.body !== undefined) {
    if (typeof options.body !== 'string') head += 'content-type: application/json\r\n';
    head += `content-length: ${Buffer.byteLength(payload)}\r\n`;
  }
  const request = Buffer.from(`${head}\r\n${payload}`);
  const { idle } = pool;
  // A connection idle for nearly the server's keep-alive timeout (5 s) may be closing as the request
  // is written, which fails the request with ECONNRESET: such a connection is not reused.
  let reused = idle.pop();
  while (reused && Date.now() - reused.idleSince > 4_000) {
    reused.socket.destroy();
    reused = idle.pop();
  }
  const socket =
    reused ??
    new KeptAliveSocket(
      pool.hostname,
      pool.port,
      (s) => idle.push(s),
      (s) => {
        const at = idle.indexOf(s);
        if (at >= 0) idle.splice(at, 1);
      },
    );
  return new Promise((resolve, reject) => socket.send(request, { resolve, reject }, method === 'HEAD'));
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The owner every bench's service boots with (ADMIN_EMAIL / ADMIN_PASSWORD). */
export const BENCH_ADMIN = { email: 'admin@localhost', password: 'bench-password-123' };

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function scaled(n: number, scale: number, min = 1): number {
  return Math.max(min, Math.round(n * scale));
}

/**
 * A spawned service ready for the send benches: signed in as `admin`, the daily cap out of the way,
 * a verified domain `bench.example.com`, the headers of a key with the `send` scope and the admin's.
 */
export async function prepareSendBench(
  base: string,
  admin: { email: string; password: string },
): Promise<{ headers: Record<string, string>; auth: Record<string, string> }> {
  const login = await call(base, 'POST', '/api/auth/login', { body: admin });
  const auth = { authorization: `Bearer ${login.body.token}` };
  await call(base, 'PATCH', '/api/settings', { headers: auth, body: { dailySendCap: 100_000_000 } });
  const domain = await call(base, 'POST', '/api/domains', { headers: auth, body: { domain: 'bench.example.com' } });
  if (domain.status !== 201) throw new Error(`domain: ${domain.status} ${JSON.stringify(domain.body)}`);
  const key = await call(base, 'POST', '/api/api-keys', { headers: auth, body: { name: 'bench', scopes: ['send'] } });
  return { headers: { 'x-api-key': key.body.key as string }, auth };
}

/** The transactional send of the send benches: an order confirmation with one tracked link. */
export const orderConfirmation = (i: number) => ({
  to: `reader${i}@example.org`,
  fromEmail: 'app@bench.example.com',
  fromName: 'Bench',
  subject: `Order ${i} confirmed`,
  html: `<html><body><p>Thanks for order ${i}.</p><p><a href="https://shop.example.com/orders/${i}">View it</a></p></body></html>`,
  text: `Thanks for order ${i}.`,
});
