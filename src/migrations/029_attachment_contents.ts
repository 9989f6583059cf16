import type { Knex } from 'knex';

/**
 * Attachment bytes, outside the event log (see src/ports/attachment-store.ts). `EXTERNAL` storage:
 * attachments are mostly compressed formats already (PDF, images, archives), so PostgreSQL's attempt
 * to compress them costs CPU on every write and gains little.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE attachment_contents (
      id         text PRIMARY KEY,
      content    bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    ALTER TABLE attachment_contents ALTER COLUMN content SET STORAGE EXTERNAL;
    ALTER TABLE sandbox_email_attachments ALTER COLUMN content SET STORAGE EXTERNAL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE attachment_contents;
    ALTER TABLE sandbox_email_attachments ALTER COLUMN content SET STORAGE EXTENDED;
  `);
}
