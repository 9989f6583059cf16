import { api, call } from './api';
import type { Contact } from './types';

/** The contact with this address (as contacts are keyed), or undefined when there is none. */
export async function contactByEmail(email: string): Promise<Contact | undefined> {
  const request = api.GET('/api/contacts/{email}', { params: { path: { email } } });
  // a request that failed on the way is left to call() to put in words
  if ((await request.catch(() => undefined))?.response.status === 404) return undefined;
  return call<Contact>(request);
}
