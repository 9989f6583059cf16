import { comparable, findColumns } from './csv-columns.js';

/**
 * A suppression list as CSV: ours (`POST /api/suppressions/export`), or another provider's, by the
 * header names their exports use (Postmark's `Email Address` and `SuppressionReason`, SES's
 * `EmailAddress` and `Reason`), compared without case, spaces or punctuation.
 */
const HEADERS = {
  email: ['email', 'emailaddress', 'address', 'recipient'],
  phone: ['phone', 'phonenumber', 'mobile', 'mobilenumber'],
  reason: ['reason', 'suppressionreason'],
  detail: ['detail', 'details', 'note', 'description'],
  person: ['person'],
} as const;
type Field = keyof typeof HEADERS;
type Reason = 'bounced' | 'complained' | 'unsubscribed' | 'manual';

export const suppressionColumns = (headers: readonly string[]) => findColumns(HEADERS, headers, (c) => (c.email || c.phone ? null : 'email or phone'));

/** Another provider's word for why (HardBounce, BOUNCE, SpamComplaint, Unsubscribe…) as ours, or null when it is none of ours. */
export function reasonOf(word: string): Reason | null {
  const w = comparable(word);
  if (w === '' || w.startsWith('manual')) return 'manual';
  if (w.includes('bounce')) return 'bounced';
  if (w.includes('complain') || w.includes('spam')) return 'complained';
  if (w.includes('unsub')) return 'unsubscribed';
  return null;
}

/** A spreadsheet-safe cell of our export (`'=…`) as it was written. */
const unescape = (cell: string) => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);

export type SuppressionEntry = { email?: string; phone?: string; reason: Reason; detail?: string };

/**
 * A CSV row as an import entry, or why it cannot be one. A reason we do not know is kept in the
 * detail of a manual suppression, so nothing the file said is lost.
 */
export function toSuppression(row: Record<string, string>, columns: Partial<Record<Field, string>>): SuppressionEntry | { skip: string } {
  const pick = (field: Field) => {
    const value = columns[field] === undefined ? '' : unescape(row[columns[field]]?.trim() ?? '');
    return value || undefined;
  };
  const email = pick('email');
  const phone = email ? undefined : pick('phone');
  if (!email && !phone) return { skip: pick('person') ? "an erased person's entry: no address is left to import" : 'no email or phone' };
  const said = pick('reason') ?? '';
  const reason = reasonOf(said);
  const detail = pick('detail') ?? (reason ? undefined : `reason at the source: ${said}`);
  return { ...(email ? { email } : { phone }), reason: reason ?? 'manual', ...(detail ? { detail } : {}) };
}
