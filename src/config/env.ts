import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { parseMasterKey } from '../adapters/crypto/master-key.js';

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `must be a URL (${protocols.join(' or ')})`);

/** Node's longest timer (about 24.8 days): a longer one fires after 1 ms, over and over. */
const MAX_TIMER_MS = 2_147_483_647;
const TOO_LONG = `must be at most ${MAX_TIMER_MS} (ms, about 24.8 days: the longest timer Node keeps)`;

const msList = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'must be a comma-separated list of milliseconds')
  .transform((v) => v.split(',').map(Number))
  .refine((list) => list.every((ms) => ms <= MAX_TIMER_MS), TOO_LONG);

// Digits only: z.coerce.number would take ' ' as 0 and '0x50' or '1e3' as numbers.
const wholeNumber = z.string().regex(/^\d+$/, 'must be a whole number, in digits (no sign)').transform(Number);
const positiveInt = wholeNumber.pipe(z.number().positive());
/** a duration in milliseconds, timed with setTimeout */
const positiveMs = wholeNumber.pipe(z.number().positive().max(MAX_TIMER_MS, TOO_LONG));
const port = (min: number) => wholeNumber.pipe(z.number().min(min).max(65535));
/** a key-encryption key (ENCRYPTION_KEY, ENCRYPTION_KEY_PREVIOUS) */
const masterKeyText = z.string().refine((v) => parseMasterKey(v) !== null, 'must be 32 bytes, base64-encoded (44 characters) or as 64 hex digits');

/**
 * express's `trust proxy` syntax: `true`/`false`, a hop count, or comma-separated addresses, CIDR ranges
 * and the names `loopback`, `linklocal`, `uniquelocal`; checked by the same compiler express uses, so a
 * typo stops start-up instead of trusting nobody (or everybody) in silence.
 */
const parseTrustProxy = (v: string): boolean | number | string =>
  v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v;
const trustProxy = z
  .string()
  .refine((v) => {
    const value = parseTrustProxy(v);
    if (typeof value !== 'string') return true;
    try {
      proxyaddr.compile(value.split(',').map((s) => s.trim()));
      return true;
    } catch {
      return false;
    }
  }, 'must be true, false, a hop count, or comma-separated addresses, CIDR ranges, loopback, linklocal or uniquelocal')
  .transform(parseTrustProxy);

const schema = z.object({
  PORT: port(0).default(3000),
  BASE_URL: url(['http:', 'https:']).optional(),
  DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
  REDIS_URL: url(['redis:', 'rediss:']).optional(),
  /** the namespace of this deployment's keys in Redis (queues, rate counters), so deployments can share one Redis */
  REDIS_PREFIX: z.string().regex(/^[\w.-]{1,64}$/, 'must be 1-64 letters, digits, _ . or -').default('courier'),
  EVENTSTORE_URL: url(['esdb:', 'esdb+discover:', 'kurrentdb:', 'kdb:']).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  EMBEDDED_PG_PORT: port(1).default(54329),
  // Loose on purpose: the default owner is admin@localhost, which has no TLD.
  ADMIN_EMAIL: z.string().regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address').default('admin@localhost'),
  ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  // The key-encryption key of the per-person data keys (docs/privacy.md); unset: kept in DATA_DIR.
  ENCRYPTION_KEY: masterKeyText.optional(),
  // during a rotation of ENCRYPTION_KEY (docs/operations.md): the key being replaced, which still opens what it wrapped
  ENCRYPTION_KEY_PREVIOUS: masterKeyText.optional(),
  // false writes personal data in clear, which no erasure can then reach: for measuring what sealing costs (docs/benchmarks.md), never for a deployment
  SEAL_PERSONAL_DATA: boolean.default(true),
  ALLOW_SIGNUP: boolean.default(false),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  AWS_ENDPOINT_URL_SESV2: url(['http:', 'https:']).optional(),
  AWS_ENDPOINT_URL_SNS: url(['http:', 'https:']).optional(),
  POSTMARK_SERVER_TOKEN: z.string().min(1).optional(),
  POSTMARK_API_URL: url(['http:', 'https:']).optional(),
  POSTMARK_WEBHOOK_USER: z.string().min(1).optional(),
  POSTMARK_WEBHOOK_PASSWORD: z.string().min(1).optional(),
  SNS_CERT_URL_PATTERN: z
    .string()
    .default('^https://sns\\.[a-z0-9-]+\\.amazonaws\\.com(\\.cn)?/')
    .refine((v) => {
      try {
        new RegExp(v);
        return true;
      } catch {
        return false;
      }
    }, 'must be a valid regular expression')
    .transform((v) => new RegExp(v)),
  /** topics whose SNS messages are acted on; unset accepts any topic (a warning at start says so) */
  SNS_TOPIC_ARNS: z
    .string()
    .transform((v) => v.split(',').map((arn) => arn.trim()))
    .refine((arns) => arns.every((arn) => /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/.test(arn)), 'must be a comma-separated list of SNS topic ARNs')
    .optional(),
  WEBHOOK_RETRY_DELAYS_MS: msList.default([60000, 120000, 240000, 480000, 960000]),
  WEBHOOK_TIMEOUT_MS: positiveMs.default(15000),
  /** delays before provider send attempts 2..6 after a transient provider error (throttling, outage) */
  PROVIDER_RETRY_DELAYS_MS: msList.default([5000, 30000, 120000, 600000, 1800000]),
  PROVIDER_SEARCH_SETTLE_MS: positiveMs.default(60000),
  /**
   * How long a worker's claim on a send, a webhook delivery or a campaign fan-out holds without its
   * heartbeat (renewed every third of it): a worker that died has its work taken over this long after.
   * Shorter takes over sooner, at one more heartbeat statement a worker per third of it. At least a
   * second: a lease that could end between two heartbeats of a live worker would hand its work on twice.
   */
  SIDE_EFFECT_LEASE_MS: wholeNumber.pipe(z.number().min(1000, 'must be at least 1000 (ms)').max(MAX_TIMER_MS, TOO_LONG)).default(15000),
  /**
   * SES publishes Send events to us (configuration set → SNS → /api/provider-events/ses): a send in
   * doubt after a crash waits SES_SEND_SETTLE_MS for its Send event before sending again. Without
   * them, a crash between SES's answer and our record can send a message twice.
   */
  SES_SEND_EVENTS: boolean.default(false),
  SES_SEND_SETTLE_MS: positiveMs.default(60000),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean.default(false),
  SMS_OPTOUT_SYNC_INTERVAL_MS: positiveMs.default(900000),
  /** how often workers look for scheduled campaigns due and cap pauses over */
  CAMPAIGN_TIMER_INTERVAL_MS: positiveMs.default(5000),
  /** contacts a campaign's fan-out takes per step (each step recorded with its counts) */
  CAMPAIGN_STEP_SIZE: positiveInt.default(500),
  /** `sns` sends through AWS (the SDK's credential chain); `sandbox` records SMS in the database and never delivers, for development. */
  SMS_PROVIDER: z.enum(['sns', 'sandbox']).default('sns'),
  /** which connections may say who the client is with X-Forwarded-For (express's `trust proxy`) */
  TRUST_PROXY: trustProxy.default('loopback'),
  /** the worker role (npm run start:worker) serves /healthz, /readyz and /metrics on this port when set */
  WORKER_PORT: port(1).optional(),
  /** when set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open */
  METRICS_TOKEN: z.string().min(1).optional(),
  // Failures counted per window before the answer is 429 with Retry-After (shared by every API process).
  /** failed sign-ins for one account from one address in a row (a success clears them) */
  LOGIN_FAILURES_PER_ACCOUNT_AND_IP: positiveInt.default(5),
  /** failed sign-ins for one account from any addresses */
  LOGIN_FAILURES_PER_ACCOUNT: positiveInt.default(20),
  /**
   * failed sign-ins from one address, for any accounts: one client trying many accounts, each of
   * which has its own smaller limits; high enough that one office (or a test suite) behind one
   * address, mistyping passwords of many accounts, is not shut out of all of them
   */
  LOGIN_FAILURES_PER_IP: positiveInt.default(100),
  /**
   * refused API keys (unknown, revoked, expired, IP not allowed) from one address. Keys are 32 random
   * bytes, beyond any guessing, so the count only bounds a flood; high enough that a client (or a test
   * suite) checking its handling of 401 answers meets 401, not 429.
   */
  API_KEY_FAILURES_PER_IP: positiveInt.default(1000),
  /** the window those counts cover; it opens with the first failure counted */
  THROTTLE_WINDOW_SECONDS: positiveInt.default(900),
  /** how long a client may take to send a request's headers (also: a connection that sends nothing is closed after it) */
  HTTP_HEADERS_TIMEOUT_MS: positiveMs.default(20000),
  /** how long a client may take to send a whole request, body included (10 MB at about 1 Mbit/s) */
  HTTP_REQUEST_TIMEOUT_MS: positiveMs.default(120000),
  /** how long an idle keep-alive connection is kept open between requests */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveMs.default(5000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = Omit<z.infer<typeof schema>, 'BASE_URL'> & { BASE_URL: string };

/** Thrown for a bad setting; its message is the one line the process prints before it exits. */
export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "unset", as in most twelve-factor tools.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0] ?? 'environment');
    throw new ConfigError(`Invalid configuration: ${name} ${issue.message}`);
  }
  const cfg = parsed.data;
  if (cfg.HTTP_HEADERS_TIMEOUT_MS > cfg.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  return { ...cfg, BASE_URL: (cfg.BASE_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/+$/, '') };
}
