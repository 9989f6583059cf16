import pg from 'pg';

/** Ends every session of the database but the caller's own, as a server restart or a failover does. */
export async function terminateEveryConnection(databaseUrl: string): Promise<number> {
  const database = new URL(databaseUrl).pathname.slice(1);
  let admin: pg.Client;
  // The server is shared with other test runs: a moment without a free connection is waited out.
  for (let attempt = 1; ; attempt++) {
    admin = new pg.Client({ connectionString: databaseUrl });
    try {
      await admin.connect();
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== '53300' || attempt > 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    const { rows } = await admin.query('SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
    return Number(rows[0].n);
  } finally {
    await admin.end();
  }
}
