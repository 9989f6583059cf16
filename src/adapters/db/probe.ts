import pg from 'pg';
import type { Logger } from 'pino';
import { StartupError } from '../../startup-error.js';

/**
 * What a server not accepting connections yet answers: nothing listening, a name not resolvable yet
 * (a container starting beside us), a server starting up or shutting down (57P03), or one whose
 * connections are all taken (53300). A wrong password or database name is never waited out.
 */
const WAITED_OUT = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '53300']);

const codeOf = (err: unknown): string | undefined => {
  const e = err as { code?: string; errors?: { code?: string }[] };
  // a refused connection to both ::1 and 127.0.0.1 is an AggregateError with only its parts' codes
  return e?.code ?? e?.errors?.[0]?.code;
};

/** The URL with its password hidden, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * A first connection, waited for up to `waitMs` while the server is not accepting connections yet
 * (started together with it, by a supervisor or compose), so an unreachable server or a wrong URL
 * fails with one clear line once that time is up, and a wrong password at once.
 */
export async function waitForDatabase(databaseUrl: string, options: { waitMs: number; logger?: Pick<Logger, 'warn'> }): Promise<void> {
  const deadline = Date.now() + options.waitMs;
  let told = false;
  for (;;) {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      const code = codeOf(err);
      if (!WAITED_OUT.has(code ?? '') || Date.now() >= deadline) {
        const why = (err as Error).message || code || String(err);
        throw new StartupError(
          `Cannot connect to PostgreSQL at ${redactUrl(databaseUrl)} (${why}): check that the server is running and that DATABASE_URL is right.`,
          { cause: err },
        );
      }
      if (!told) options.logger?.warn({ url: redactUrl(databaseUrl), code, waitMs: options.waitMs }, 'PostgreSQL does not accept connections yet: waiting for it');
      told = true;
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await client.end().catch(() => {});
    }
  }
}
