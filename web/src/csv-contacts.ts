import { normaliseEmail } from '../../src/domain/email/address.js';
import { findColumns } from './csv-columns.js';

/**
 * Header names as spreadsheets and other services' exports write them (`Email Address`, `First Name`,
 * `first_name`, `E-mail`), compared without case, spaces or punctuation, by the contact field each fills.
 */
const HEADERS = {
  email: ['email', 'emailaddress', 'mail'],
  firstName: ['firstname', 'first', 'givenname'],
  lastName: ['lastname', 'last', 'surname', 'familyname'],
  company: ['company', 'organization', 'organisation'],
  status: ['status'],
  tags: ['tags', 'tag'],
  listIds: ['listids', 'lists', 'list'],
} as const;
type Field = keyof typeof HEADERS;

/** Which column fills each field; a CSV without an address column is refused before anything is sent. */
export const contactColumns = (headers: readonly string[]) => findColumns(HEADERS, headers, (c) => (c.email ? null : 'email'));

/** A CSV row as a contact: empty cells left out, `tags` and `listIds` split on `;` or `|`. */
export function toContact(row: Record<string, string>, columns: Partial<Record<Field, string>>) {
  const pick = (field: Field) => {
    const value = columns[field] === undefined ? undefined : row[columns[field]]?.trim();
    return value ? value : undefined;
  };
  const list = (field: Field) => pick(field)?.split(/[;|]/).map((s) => s.trim()).filter(Boolean);
  return {
    email: pick('email'),
    firstName: pick('firstName'),
    lastName: pick('lastName'),
    company: pick('company'),
    status: pick('status'),
    tags: list('tags'),
    listIds: list('listIds'),
  };
}

/**
 * Rows of a file with each address once: a later row of an address already in the file is left out
 * and said to be a duplicate of the first, by its line. Addresses compare as the service keys contacts
 * (normaliseEmail), across the whole file: the service sees one batch at a time, and takes a
 * duplicate in a later batch for an update.
 */
export function withoutDuplicates<T extends { email?: string }>(rows: { line: number; item: T }[]): { items: { line: number; item: T }[]; skipped: string[] } {
  const firstLine = new Map<string, number>();
  const items: { line: number; item: T }[] = [];
  const skipped: string[] = [];
  for (const row of rows) {
    const address = row.item.email === undefined ? undefined : normaliseEmail(row.item.email);
    const first = address === undefined ? undefined : firstLine.get(address);
    if (first !== undefined) {
      skipped.push(`Line ${row.line} (${row.item.email}): duplicate of line ${first}`);
      continue;
    }
    if (address !== undefined) firstLine.set(address, row.line);
    items.push(row);
  }
  return { items, skipped };
}
