import { badRequest } from '../domain/errors.js';

/**
 * Where a page of a list ordered by time then id ended, as an opaque cursor: the last item's time (as
 * the database prints it, to the microsecond) and id. The next page starts after it.
 */
export type PageEnd = [at: string, id: string];

const encodePageCursor = (end: PageEnd): string => Buffer.from(JSON.stringify(end)).toString('base64url');

/** The page end a cursor names; 400 `cursor is invalid` for anything this service did not issue. */
export function decodePageCursor(cursor: string): PageEnd {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && !Number.isNaN(Date.parse(parsed[0])) && typeof parsed[1] === 'string') {
      return parsed as PageEnd;
    }
  } catch {
    /* falls through */
  }
  throw badRequest('cursor is invalid');
}

/**
 * A page of `limit` items from rows read with one more than that (each with its `after`, the page end
 * it would make), and the cursor of the page after it: null when the extra row did not come.
 */
export function pageOf<R extends Record<string, any>>(rows: R[], limit: number): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, nextCursor: rows.length > limit ? encodePageCursor(page[page.length - 1].after as PageEnd) : null };
}
