import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { open, seal } from '../../../src/adapters/crypto/aes-gcm.js';
import { createMasterKey, generateMasterKeyText, parseMasterKey } from '../../../src/adapters/crypto/master-key.js';

describe('the key-encryption key and AES-256-GCM boxes', () => {
  it('a box opens with its key and aad only; a tampered or truncated one does not', () => {
    const key = randomBytes(32);
    const box = seal(key, Buffer.from('hello'), 'aad');
    expect(open(key, box, 'aad')?.toString()).to.equal('hello');
    expect(open(key, box, 'other')).to.equal(null);
    expect(open(randomBytes(32), box, 'aad')).to.equal(null);
    const tampered = Buffer.from(box);
    tampered[tampered.length - 1] ^= 1;
    expect(open(key, tampered, 'aad')).to.equal(null);
    expect(open(key, box.subarray(0, 20), 'aad')).to.equal(null);
  });

  it('ENCRYPTION_KEY is 32 bytes as base64 or 64 hex digits; anything else is refused', () => {
    const text = generateMasterKeyText();
    expect(parseMasterKey(text)).to.have.length(32);
    expect(parseMasterKey('ab'.repeat(32))).to.have.length(32);
    for (const bad of ['', 'short', 'ab'.repeat(31), randomBytes(16).toString('base64'), 'not base64 at all, with spaces, 44 chars long']) expect(parseMasterKey(bad), bad).to.equal(null);
  });

  it('wraps data keys bound to their id; verifies only itself; hashes every spelling of an address alike', () => {
    const master = createMasterKey(randomBytes(32));
    const dataKey = randomBytes(32);
    const wrapped = master.wrap('id-1', dataKey);
    expect(master.unwrap('id-1', wrapped)).to.deep.equal(dataKey);
    expect(master.unwrap('id-2', wrapped)).to.equal(null);
    expect(master.verifies(master.verifier())).to.equal(true);
    expect(createMasterKey(randomBytes(32)).verifies(master.verifier())).to.equal(false);
    expect(master.person(' Ada@Example.ORG ')).to.equal(master.person('ada@example.org'));
    expect(master.person('ada@example.org')).to.not.equal(master.person('bob@example.org'));
    expect(master.person('ada@example.org')).to.not.equal(createMasterKey(randomBytes(32)).person('ada@example.org'));
  });

  it('digests a text under the hashing key: the same text alike, exactly as written; no person hash; the same key after a rotation', () => {
    const key = randomBytes(32);
    const master = createMasterKey(key);
    const link = 'https://example.com/welcome?u=ada';
    expect(master.digest(link)).to.match(/^[0-9a-f]{32}$/).and.equal(master.digest(link));
    expect(master.digest(link.toUpperCase())).to.not.equal(master.digest(link));
    expect(master.digest('ada@example.org')).to.not.equal(master.person('ada@example.org').slice(0, 32));
    expect(createMasterKey(randomBytes(32)).digest(link)).to.not.equal(master.digest(link));
    // a rotated database keeps its hashing key: digests made before still match
    expect(createMasterKey(randomBytes(32), { previous: key }).digest(link)).to.equal(master.digest(link));
  });
});
