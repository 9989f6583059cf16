/** A header or a word as it is compared: without case, spaces or punctuation (`Email Address` is `emailaddress`). */
export const comparable = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * Which column of a CSV fills each field, by the names exports give it (`names[field]`, comparable
 * forms), or throws `missing` with the names the header row has, when `required` finds none it needs.
 */
export function findColumns<F extends string>(names: Record<F, readonly string[]>, headers: readonly string[], required: (columns: Partial<Record<F, string>>) => string | null): Partial<Record<F, string>> {
  const columns: Partial<Record<F, string>> = {};
  for (const field of Object.keys(names) as F[]) {
    const header = headers.find((h) => names[field].includes(comparable(h)));
    if (header !== undefined) columns[field] = header;
  }
  const missing = required(columns);
  if (missing) throw new Error(`The CSV has no ${missing} column (its header row names: ${headers.filter(Boolean).join(', ') || 'none'}). Name the column of addresses "email".`);
  return columns;
}
