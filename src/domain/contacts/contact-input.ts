import { z } from 'zod';
import { emailAddress, normaliseEmail } from '../email/address.js';
import { describeZodError } from '../errors.js';
import { CONTACT_STATUSES } from './contact.js';

/** Length limits (our choice, documented in docs/api.md): generous for real data, small enough to index and page. */
export const LIMITS = { email: 320, name: 200, label: 100, labels: 100 } as const;

const name = z.string().trim().max(LIMITS.name).nullable();
const labels = z.array(z.string().trim().min(1).max(LIMITS.label)).max(LIMITS.labels);

/**
 * One contact as the API takes it (email, names, company, tags, status, listIds). Absent fields keep their stored value on an
 * update; `null` clears a name or the company. The email is validated after trimming, and the
 * contact is keyed by its normal form (normaliseEmail: trimmed and lower-cased as a whole, local
 * part included) — the same form suppressions and sends use, so a contact's status and the
 * suppression list always agree on who `Bob@Example.org` is.
 */
export const contactInput = z
  .object({
    email: z.string().trim().max(LIMITS.email).pipe(emailAddress()),
    firstName: name.optional(),
    lastName: name.optional(),
    company: name.optional(),
    tags: labels.optional(),
    status: z.enum(CONTACT_STATUSES).optional(),
    listIds: labels.optional(),
  })
  .strict();
export type ContactInput = z.infer<typeof contactInput>;

export const MAX_IMPORT = 5000;

export interface ImportRowError {
  index: number;
  email?: string;
  message: string;
}

/**
 * Splits an import into valid rows and errors by index. A bad row never fails the request: the
 * caller gets the list and the valid rows are still imported. The same address twice in one
 * request is an error on the later row (which of two conflicting rows should win is the caller's
 * call, not ours).
 */
export function checkImportRows(rows: unknown[]): { valid: { index: number; email: string; input: ContactInput }[]; errors: ImportRowError[] } {
  const valid: { index: number; email: string; input: ContactInput }[] = [];
  const errors: ImportRowError[] = [];
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    const parsed = contactInput.safeParse(row);
    if (!parsed.success) {
      const email = (row as { email?: unknown } | null)?.email;
      errors.push({ index, ...(typeof email === 'string' ? { email } : {}), message: describeZodError(parsed.error) });
      return;
    }
    const email = normaliseEmail(parsed.data.email);
    const first = seen.get(email);
    if (first !== undefined) {
      errors.push({ index, email: parsed.data.email, message: `duplicate of contacts[${first}] in this request` });
      return;
    }
    seen.set(email, index);
    valid.push({ index, email, input: parsed.data });
  });
  return { valid, errors };
}
