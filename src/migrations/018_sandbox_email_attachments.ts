import type { Knex } from 'knex';

/**
 * What the sandbox provider received as attachments, one row each, bytes included (decoded), so a
 * dashboard can show and download them. Apart from `sandbox_emails`, so listing the recorded emails
 * never reads the bytes: select without `content` for a list.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sandbox_email_attachments (
      message_id   text NOT NULL REFERENCES sandbox_emails (message_id) ON DELETE CASCADE,
      position     integer NOT NULL,
      filename     text NOT NULL,
      content_type text NOT NULL,
      content_id   text,
      size         integer NOT NULL,
      content      bytea NOT NULL,
      PRIMARY KEY (message_id, position)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE sandbox_email_attachments;');
}
