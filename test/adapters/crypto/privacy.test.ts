import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createMemoryKeyStore } from '../../../src/adapters/crypto/memory-key-store.js';
import { KEY_FILE, openPrivacy } from '../../../src/adapters/crypto/privacy.js';
import { createMasterKey, derivedPersonHashKey, parseMasterKey, PERSON_HASH_KEY_ID } from '../../../src/adapters/crypto/master-key.js';
import { StartupError } from '../../../src/startup-error.js';
import { loadConfig } from '../../../src/config/env.js';

describe('the encryption key at start-up', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'p-erase-key-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const refusal = (p: Promise<unknown>) => p.then(() => expect.fail('should have stopped the start'), (err: Error) => err);

  it('unset, one is generated into DATA_DIR (mode 0600) and used again on the next start', async () => {
    const store = createMemoryKeyStore();
    const first = await openPrivacy({ dataDir, store });
    const text = readFileSync(join(dataDir, KEY_FILE), 'utf8');
    expect(Buffer.from(text.trim(), 'base64')).to.have.length(32);
    expect(statSync(join(dataDir, KEY_FILE)).mode & 0o777).to.equal(0o600);
    const again = await openPrivacy({ dataDir, store });
    expect(again.personOf('a@example.org')).to.equal(first.personOf('a@example.org'));
  });

  it('a database holding encrypted data and no key to open it stops the start with one line', async () => {
    const store = createMemoryKeyStore();
    await store.store([{ accountId: 'a', person: 'p', scope: 'profile', id: 'k', wrapped: randomBytes(60) }]);
    const err = await refusal(openPrivacy({ dataDir, store }));
    expect(err).to.be.instanceOf(StartupError);
    expect(err.message).to.match(/^ENCRYPTION_KEY is not set .* the database holds encrypted personal data: set ENCRYPTION_KEY to the key it was written with /);
    expect(err.message).to.not.include('\n');
  });

  it('with no key to give, a start on a database another key was bound to stops with one line naming the file, generating none', async () => {
    const store = createMemoryKeyStore();
    // another process (another DATA_DIR) bound its key to the database, before any data was sealed
    await openPrivacy({ dataDir: mkdtempSync(join(tmpdir(), 'p-erase-key-')), store });
    const err = await refusal(openPrivacy({ dataDir, store }));
    expect(err.message).to.equal(
      `ENCRYPTION_KEY is not set and ${join(dataDir, KEY_FILE)} does not exist, but the database holds encrypted personal data: set ENCRYPTION_KEY to the key it was written with (processes sharing a database need the same key: set it, or give them the same DATA_DIR).`,
    );
    expect(() => statSync(join(dataDir, KEY_FILE))).to.throw(/ENOENT/);
  });

  it('a key file that is not the one the data was written with is named as the key refused, not ENCRYPTION_KEY', async () => {
    const store = createMemoryKeyStore();
    await openPrivacy({ dataDir, store, encryptionKey: randomBytes(32).toString('base64') });
    writeFileSync(join(dataDir, KEY_FILE), `${randomBytes(32).toString('base64')}\n`);
    const err = await refusal(openPrivacy({ dataDir, store }));
    expect(err.message).to.equal(`The key in ${join(dataDir, KEY_FILE)} (ENCRYPTION_KEY is not set) is not the key the stored personal data was encrypted with: set the key it was written with.`);
  });

  it('a key that is not the one the data was written with stops the start', async () => {
    const store = createMemoryKeyStore();
    await openPrivacy({ dataDir, store, encryptionKey: randomBytes(32).toString('base64') });
    const err = await refusal(openPrivacy({ dataDir, store, encryptionKey: randomBytes(32).toString('base64') }));
    expect(err).to.be.instanceOf(StartupError);
    expect(err.message).to.match(/^ENCRYPTION_KEY is not the key/);
  });

  it('a damaged key file stops the start; a malformed ENCRYPTION_KEY is a configuration error naming it', async () => {
    writeFileSync(join(dataDir, KEY_FILE), 'not a key\n');
    expect(await refusal(openPrivacy({ dataDir, store: createMemoryKeyStore() }))).to.be.instanceOf(StartupError);
    expect(() => loadConfig({ ENCRYPTION_KEY: 'too-short' })).to.throw(/ENCRYPTION_KEY must be 32 bytes/);
  });

  it('during a rotation (ENCRYPTION_KEY_PREVIOUS) the old key still opens its keys and its verifier, new keys are wrapped under the new one, and addresses hash as before', async () => {
    const store = createMemoryKeyStore();
    const oldKey = randomBytes(32).toString('base64');
    const newKey = randomBytes(32).toString('base64');
    const before = await openPrivacy({ dataDir, store, encryptionKey: oldKey });
    const wrapped = before.master.wrap('k1', Buffer.alloc(32, 1));
    const during = await openPrivacy({ dataDir, store, encryptionKey: newKey, previousKey: oldKey });
    expect(during.master.unwrap('k1', wrapped)).to.deep.equal(Buffer.alloc(32, 1));
    expect(during.personOf('A@Example.org')).to.equal(before.personOf('a@example.org'));
    const fresh = during.master.wrap('k2', Buffer.alloc(32, 2));
    const alone = createMasterKey(parseMasterKey(newKey)!);
    expect(alone.unwrap('k2', fresh)).to.deep.equal(Buffer.alloc(32, 2));
    expect(alone.unwrap('k1', wrapped)).to.equal(null);
  });

  it('a rotated database hashes addresses with its stored hashing key, which the new key alone opens', async () => {
    const store = createMemoryKeyStore();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = await openPrivacy({ dataDir, store, encryptionKey: oldKey.toString('base64') });
    // a store as rotate-encryption-key leaves it: the hashing key stored, the verifier switched
    const next = createMasterKey(newKey);
    const rotated = createMemoryKeyStore();
    await rotated.verifier(next.verifier());
    await rotated.store([{ accountId: '', person: '', scope: 'person-hash', id: PERSON_HASH_KEY_ID, wrapped: next.wrap(PERSON_HASH_KEY_ID, derivedPersonHashKey(oldKey)) }]);
    const after = await openPrivacy({ dataDir, store: rotated, encryptionKey: newKey.toString('base64') });
    expect(after.personOf('a@example.org')).to.equal(before.personOf('a@example.org'));
    const err = await refusal(openPrivacy({ dataDir, store: rotated, encryptionKey: oldKey.toString('base64') }));
    expect(err.message).to.match(/^ENCRYPTION_KEY is not the key/);
  });
});
