import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

/**
 * Every file `NNN_name.ts` in this folder is a knex migration, applied in name order. Loaded by
 * explicit import so it works the same under tsx, mocha and a bundler.
 */
const here = dirname(fileURLToPath(import.meta.url));

/**
 * Migrations that took another name after databases had recorded them under the old one (two files
 * once shared the number 017): the old name is recorded under the new before knex compares its list
 * with the files, as the code is the same.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  '017_sandbox_email_attachments': '018_sandbox_email_attachments',
};

export const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    return readdirSync(here)
      .filter((f) => /^\d{3}_[\w-]+\.(ts|js)$/.test(f))
      .sort();
  },
  getMigrationName(file) {
    return file.replace(/\.(ts|js)$/, '');
  },
  async getMigration(file) {
    return (await import(pathToFileURL(join(here, file)).href)) as Knex.Migration;
  },
};
