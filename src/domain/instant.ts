import { z } from 'zod';

/**
 * Instants a caller gives (filters, schedules, expiries). ISO 8601 lets through what JavaScript reads
 * but PostgreSQL refuses (an offset past ±15:59: `time zone displacement out of range`; year 0000:
 * `date/time field value out of range`), and such a value reached a query as a 500, or an event that
 * its projection could not write. So an instant is taken only when both read it alike: offsets of real
 * time zones (±14:00 at most) and years 0001 to 9999, before and after the offset is applied.
 */
export const MAX_OFFSET_MINUTES = 14 * 60;
const FIRST_INSTANT = new Date('0001-01-01T00:00:00Z').getTime();
const LAST_INSTANT = new Date('9999-12-31T23:59:59.999Z').getTime();

export const INSTANT_MESSAGE = 'must be an ISO 8601 instant such as 2026-03-01T09:00:00Z, with a UTC offset within ±14:00 and a year from 0001 to 9999';

const SHAPE = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(Z|([+-])(\d{2}):(\d{2}))$/;

/** Whether JavaScript and PostgreSQL both take `text` as the same instant (its shape is zod's `z.iso.datetime({offset: true})`). */
export function isAcceptedInstant(text: string): boolean {
  const m = SHAPE.exec(text);
  if (!m || m[1] === '0000') return false;
  if (m[3] && Number(m[4]) * 60 + Number(m[5]) > MAX_OFFSET_MINUTES) return false;
  const at = new Date(text).getTime();
  return at >= FIRST_INSTANT && at <= LAST_INSTANT;
}

/** A given instant, kept as written (offset included): every date parameter and field of the API takes this one. A malformed one is one problem, said once (`abort`). */
export const givenInstant = z.iso.datetime({ offset: true, message: INSTANT_MESSAGE, abort: true }).refine(isAcceptedInstant, { message: INSTANT_MESSAGE });

// PostgreSQL's ISO DateStyle output of a timestamptz cast to text, `2026-11-27 10:00:00.123456+00`
// (the offset of the session's time zone, `+05:30` or `+05:45` for some).
const PRINTED = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?[+-](\d{2})(?::(\d{2}))?$/;

/**
 * Whether `text` is a timestamp as PostgreSQL prints one (a page cursor carries one back): a real
 * date and time of years 0001 to 9999 with a time zone's offset, and nothing PostgreSQL would refuse.
 */
export function isPrintedTimestamp(text: string): boolean {
  const m = PRINTED.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((x) => Number(x ?? 0));
  if (year < 1 || hour > 23 || minute > 59 || second > 59 || offsetMinutes > 59 || offsetHours * 60 + offsetMinutes > MAX_OFFSET_MINUTES) return false;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
