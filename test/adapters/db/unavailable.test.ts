import { expect } from 'chai';
import { isStoreUnavailable } from '../../../src/adapters/db/unavailable.js';
import { DATABASE_UNAVAILABLE, mapError } from '../../../src/http/error-mapping.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isStoreUnavailable: a lost or refused database, told from a bad statement', () => {
  const unavailable: [string, unknown][] = [
    ['a connection lost mid-query (node-postgres, with the statement knex puts before it)', new Error('select * from "messages" - Connection terminated unexpectedly')],
    ['pg_terminate_backend (57P01 admin_shutdown)', withCode('terminating connection due to administrator command', '57P01')],
    ['a server starting up (57P03)', withCode('the database system is starting up', '57P03')],
    ['too many connections (53300)', withCode('sorry, too many clients already', '53300')],
    ['a connection exception (class 08)', withCode('connection failure', '08006')],
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a Unix-domain socket whose server stopped (its file gone)', Object.assign(withCode('connect ENOENT /data/postgres/.s.PGSQL.54329', 'ENOENT'), { syscall: 'connect' })],
    ['a refused connection to ::1 and 127.0.0.1 (an AggregateError with the codes on its parts)', new AggregateError([withCode('', 'ECONNREFUSED'), withCode('', 'ECONNREFUSED')])],
    ['a pool that could not get a connection in time', Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' })],
    ['one wrapped as the cause of another', new Error('reading the stream failed', { cause: withCode('read ECONNRESET', 'ECONNRESET') })],
  ];
  for (const [what, err] of unavailable) it(`yes: ${what}`, () => expect(isStoreUnavailable(err)).to.equal(true));

  const other: [string, unknown][] = [
    ['a syntax error (42601)', withCode('syntax error at or near "SELEC"', '42601')],
    ['a unique violation (23505)', withCode('duplicate key value violates unique constraint', '23505')],
    ['a plain error', new Error('something else')],
    ['a file not found (ENOENT, not from a connect)', Object.assign(withCode("open '/nowhere'", 'ENOENT'), { syscall: 'open' })],
    ['not an error', 'Connection terminated'],
    ['nothing', undefined],
  ];
  for (const [what, err] of other) it(`no: ${what}`, () => expect(isStoreUnavailable(err)).to.equal(false));

  it('the error mapping answers it 503 with a clear message and Retry-After, and a bad statement still 500', () => {
    expect(mapError(withCode('terminating connection due to administrator command', '57P01'))).to.deep.equal({
      status: 503,
      body: { message: DATABASE_UNAVAILABLE, error: 'Service Unavailable', statusCode: 503 },
      unexpected: false,
      headers: { 'retry-after': '1' },
    });
    expect(mapError(withCode('syntax error', '42601'))).to.include({ status: 500, unexpected: true });
  });
});
