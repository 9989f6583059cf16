import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createMemoryKeyStore } from '../../../src/adapters/crypto/memory-key-store.js';
import { KEY_FILE, openPrivacy } from '../../../src/adapters/crypto/privacy.js';
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
    expect(err.message).to.match(/^ENCRYPTION_KEY is not set .* the database holds encrypted personal data: set ENCRYPTION_KEY to the key it was written with\.$/);
    expect(err.message).to.not.include('\n');
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
});
