import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

/**
 * Every file `NNN_name.ts` in this folder is a knex migration, applied in name order. Loaded by
 * explicit import so it works the same under tsx, mocha and a bundler.
 */
const here = dirname(fileURLToPath(import.meta.url));

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
