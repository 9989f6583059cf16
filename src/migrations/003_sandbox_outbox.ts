import type { Knex } from 'knex';

/**
 * The sandbox providers' outboxes: what the service would have handed to a real provider. Nothing here
 * is ever delivered. `sandbox_sms_optouts` plays the provider's opt-out list.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sandbox_emails (
      message_id  text PRIMARY KEY,
      from_header text NOT NULL,
      to_address  text NOT NULL,
      reply_to    text,
      subject     text NOT NULL,
      html        text,
      text        text,
      headers     jsonb NOT NULL,
      provider_tracking boolean NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE sandbox_sms (
      message_id  text PRIMARY KEY,
      to_number   text NOT NULL,
      from_number text NOT NULL,
      body        text NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE sandbox_sms_optouts (
      phone_number text PRIMARY KEY,
      created_at   timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE sandbox_sms_optouts; DROP TABLE sandbox_sms; DROP TABLE sandbox_emails;');
}
