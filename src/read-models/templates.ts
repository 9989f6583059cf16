import type { Db } from '../adapters/db/knex.js';

export interface TemplateRow {
  id: string;
  account_id: string;
  name: string;
  subject: string;
  html: string;
  text: string;
  created_at: Date;
  updated_at: Date;
}

/** One of an account's templates (these columns of it), or undefined. */
export async function templateRow<C extends keyof TemplateRow = keyof TemplateRow>(db: Db, accountId: string, id: string, columns?: C[]): Promise<Pick<TemplateRow, C> | undefined> {
  const row: Record<string, any> | undefined = await db('templates').where({ id, account_id: accountId }).first(columns ?? ['*']);
  return row as Pick<TemplateRow, C> | undefined;
}

/** An account's templates, newest first. */
export const templatesOf = (db: Db, accountId: string): Promise<TemplateRow[]> => db('templates').where({ account_id: accountId }).orderBy('created_at', 'desc');
