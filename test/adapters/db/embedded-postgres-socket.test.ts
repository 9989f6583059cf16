import { expect } from 'chai';
import { socketDirectory } from '../../../src/adapters/db/embedded-postgres.js';

describe('embedded PostgreSQL: where its Unix-domain socket goes', () => {
  it('in the data directory when the socket path fits', () => {
    expect(socketDirectory('/var/lib/courier-ledger/data/app-.data-34269ff1eb88/postgres', 54329)).to.equal('/var/lib/courier-ledger/data/app-.data-34269ff1eb88/postgres');
  });

  it('nowhere (TCP alone) when the path would be longer than a socket address holds', () => {
    const deep = `/home/someone/${'a-rather-long-folder-name/'.repeat(4)}.data/postgres`;
    expect(Buffer.byteLength(`${deep}/.s.PGSQL.54329`)).to.be.above(100);
    expect(socketDirectory(deep, 54329)).to.equal(undefined);
  });
});
