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
