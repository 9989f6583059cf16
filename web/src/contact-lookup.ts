import { normaliseEmail } from '../../src/domain/email/address.js';
import { api, call } from './api';
import type { Contact } from './types';

/**
 * The contact with this address, or undefined. The API finds contacts by text they contain only, and
 * others can contain the address (`xbig1@bulk.example`, a company named after it) and come first: the
 * pages of that search are read until the address itself turns up, compared as contacts are keyed.
 */
export async function contactByEmail(email: string): Promise<Contact | undefined> {
  const wanted = normaliseEmail(email);
  for (let page = 1; ; page++) {
    const found = await call<{ items: Contact[]; totalPages: number }>(api.GET('/api/contacts', { params: { query: { search: wanted, limit: 100, page } } }));
    const contact = found.items.find((c) => normaliseEmail(c.email) === wanted);
    if (contact || page >= found.totalPages) return contact;
  }
}
