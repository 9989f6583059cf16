import { z } from 'zod';
import { emailAddress, normaliseEmail } from '../email/address.js';
import { describeZodError } from '../errors.js';
import { notAPhoneNumber, parsePhoneNumber } from '../sms/phone.js';
import type { SuppressionReason } from './suppression.js';

export const MAX_SUPPRESSION_IMPORT = 1000;

/** The reasons an imported entry may carry: what another provider's list says (an SMS opt-out is the provider's own to report). */
export const IMPORTED_REASONS = ['bounced', 'complained', 'unsubscribed', 'manual'] as const satisfies readonly SuppressionReason[];

/** One entry of an import: an address or a number, why (default `manual`), and a note. */
export const suppressionImportEntry = z
  .object({
    email: z.string().trim().max(320).pipe(emailAddress()).optional(),
    phone: z.string().trim().max(32).optional(),
    reason: z.enum(IMPORTED_REASONS).default('manual'),
    detail: z.string().trim().max(500).nullable().optional(),
  })
  .strict()
  .refine((e) => Boolean(e.email) !== Boolean(e.phone), { message: 'give exactly one of email or phone' });

export interface ImportedSuppression {
  index: number;
  value: string;
  kind: 'email' | 'phone';
  reason: (typeof IMPORTED_REASONS)[number];
  detail: string | null;
}
export interface SuppressionImportError {
  index: number;
  value?: string;
  message: string;
}

/**
 * Splits an import into the entries to suppress and errors by index: a bad entry never fails the
 * request. An address listed twice (another provider's list per message stream names it once per
 * stream) is suppressed once, by its first entry; the later ones are `repeated`.
 */
export function checkSuppressionImport(entries: unknown[]): { valid: ImportedSuppression[]; repeated: number; errors: SuppressionImportError[] } {
  const valid: ImportedSuppression[] = [];
  const errors: SuppressionImportError[] = [];
  const seen = new Set<string>();
  let repeated = 0;
  entries.forEach((entry, index) => {
    const raw = entry as { email?: unknown; phone?: unknown } | null;
    const named = typeof raw?.email === 'string' ? raw.email : typeof raw?.phone === 'string' ? raw.phone : undefined;
    const refuse = (message: string) => errors.push({ index, ...(named !== undefined ? { value: named } : {}), message });
    const parsed = suppressionImportEntry.safeParse(entry);
    if (!parsed.success) return refuse(describeZodError(parsed.error));
    const { email, phone, reason, detail } = parsed.data;
    const value = email ? normaliseEmail(email) : parsePhoneNumber(phone!);
    if (!value) return refuse(`phone: ${notAPhoneNumber(phone!)}`);
    if (seen.has(value)) return void repeated++;
    seen.add(value);
    valid.push({ index, value, kind: email ? 'email' : 'phone', reason, detail: detail || null });
  });
  return { valid, repeated, errors };
}
