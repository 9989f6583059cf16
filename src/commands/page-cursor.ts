import { badRequest } from '../domain/errors.js';
import { isPrintedTimestamp } from '../domain/instant.js';

/**
 * Where a page of a list ordered by time then id ended, as an opaque cursor: the last item's time (as
 * the database prints it, to the microsecond) and id. The next page starts after it.
 */
export type PageEnd = [at: string, id: string];

const encodePageCursor = (end: PageEnd): string => Buffer.from(JSON.stringify(end)).toString('base64url');

/** An id or keyed hash as the lists order by: text PostgreSQL can compare (no NUL), of a sane length. */
const isPageId = (v: unknown): v is string => typeof v === 'string' && v.length <= 512 && !v.includes('\u0000');

/** The page end a cursor names; 400 `cursor is invalid` for anything this service did not issue. */
export function decodePageCursor(cursor: string): PageEnd {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // As strictly as it was written: both parts go to PostgreSQL as they are, where an offset past
    // ±15:59, year 0000 or a NUL character is an error (a 500), not an empty page.
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && isPrintedTimestamp(parsed[0]) && isPageId(parsed[1])) {
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
