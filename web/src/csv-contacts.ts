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

const comparable = (header: string) => header.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Which column fills each field; a CSV without an address column is refused before anything is sent. */
export function contactColumns(headers: readonly string[]): Partial<Record<Field, string>> {
  const columns: Partial<Record<Field, string>> = {};
  for (const field of Object.keys(HEADERS) as Field[]) {
    const header = headers.find((h) => (HEADERS[field] as readonly string[]).includes(comparable(h)));
    if (header !== undefined) columns[field] = header;
  }
  if (!columns.email) {
    const found = headers.filter(Boolean).join(', ') || 'none';
    throw new Error(`The CSV has no email column (its header row names: ${found}). Name the column of addresses "email".`);
  }
  return columns;
}

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
