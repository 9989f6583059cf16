import { expect } from 'chai';
import type { TestApp } from './app.js';

/** The API's error shape (a validation error adds `issues`, the list of every problem). */
export function expectError(res: { status: number; body: any }, status: number, message: string | RegExp) {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  const names: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' };
  expect(Object.keys(res.body).filter((k) => k !== 'issues')).to.have.members(['message', 'error', 'statusCode']);
  expect(res.body.error).to.equal(names[status]);
  expect(res.body.statusCode).to.equal(status);
  if (typeof message === 'string') expect(res.body.message).to.equal(message);
  else expect(res.body.message).to.match(message);
}

/** Events recorded on contact streams of the default account's and every other account's contacts. */
export async function contactEventCount(app: TestApp): Promise<number> {
  const row = await app.infra.db('events').where('stream_id', 'like', 'contact-%').count('* as n').first();
  return Number(row?.n);
}
