import type { Knex } from 'knex';

/**
 * Attempt counters of the PostgreSQL rate limiter (rate-limiter-flexible's layout: key, points, expiry
 * in epoch milliseconds), created here rather than by the library at start-up. Keys are the limit's name
 * and a hash or an address, never an email in clear.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE rate_limits (
      key    text PRIMARY KEY,
      points integer NOT NULL DEFAULT 0,
      expire bigint
    );
    CREATE INDEX rate_limits_expire ON rate_limits (expire);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE rate_limits;');
}
