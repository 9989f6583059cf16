import { expect } from 'chai';
import { hashPassword, passwordStamp, sessionStands, verifyPassword } from '../../../src/domain/accounts/password.js';

describe('passwords and the sessions issued under them', () => {
  it('a hash verifies its password only; each hash of the same password has its own salt and stamp', async () => {
    const first = await hashPassword('correct horse');
    const second = await hashPassword('correct horse');
    expect(await verifyPassword('correct horse', first)).to.equal(true);
    expect(await verifyPassword('correct hors', first)).to.equal(false);
    expect(first).to.not.equal(second);
    expect(passwordStamp(first)).to.not.equal(passwordStamp(second));
    expect(passwordStamp(first)).to.equal(passwordStamp(first));
    expect(passwordStamp(first)).to.not.include('correct');
  });

  it('a session stands while the password it was issued under is current, and ends once it is another', async () => {
    const hash = await hashPassword('correct horse');
    const stamp = passwordStamp(hash);
    expect(sessionStands(stamp, hash)).to.equal(true);
    expect(sessionStands(stamp, await hashPassword('correct horse'))).to.equal(false);
    // a user the read model does not know yet: nothing to compare with
    expect(sessionStands(stamp, undefined)).to.equal(true);
  });
});
