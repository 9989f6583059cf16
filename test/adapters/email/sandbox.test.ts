import { expect } from 'chai';
import { createId } from '@paralleldrive/cuid2';
import { createSandboxEmailProvider } from '../../../src/adapters/email/sandbox.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { emailProviderContract, type Received } from './contract.js';

async function receivedBy(db: TestDatabase['db']): Promise<Received[]> {
  const rows = await db('sandbox_emails').orderBy('created_at');
  return rows.map((r) => ({
    messageId: r.message_id,
    providerMessageId: `sandbox-${r.message_id}`,
    from: r.from_header,
    to: r.to_address,
    replyTo: r.reply_to ?? undefined,
    subject: r.subject,
    html: r.html ?? undefined,
    text: r.text ?? undefined,
    headers: r.headers,
    trackingDisabled: !r.provider_tracking,
  }));
}

emailProviderContract('sandbox', { sendsCanFail: false, verifiesDomains: true, findsSent: true }, async () => {
  const testDb = await createTestDatabase();
  return {
    provider: createSandboxEmailProvider({ db: testDb.db }),
    received: () => receivedBy(testDb.db),
    cleanup: () => testDb.drop(),
  };
});

describe('sandbox email adapter specifics', function () {
  let testDb: TestDatabase;
  before(async () => {
    testDb = await createTestDatabase();
  });
  after(() => testDb.drop());

  it('deduplicates on our message id: a re-send records nothing new and answers the same provider id', async () => {
    const provider = createSandboxEmailProvider({ db: testDb.db });
    const messageId = createId();
    const first = await provider.send({ messageId, from: 'a@example.com', to: 'b@example.org', subject: 'one', text: 'x', headers: [], disableProviderTracking: true });
    const second = await provider.send({ messageId, from: 'a@example.com', to: 'b@example.org', subject: 'two', text: 'x', headers: [], disableProviderTracking: true });
    expect(second.providerMessageId).to.equal(first.providerMessageId);
    const rows = await testDb.db('sandbox_emails').where({ message_id: messageId });
    expect(rows).to.have.length(1);
    expect(rows[0].subject).to.equal('one');
  });

  it('records concurrent sends (recorded together) each once, a duplicate among them too', async () => {
    const provider = createSandboxEmailProvider({ db: testDb.db });
    const ids = [createId(), createId(), createId()];
    const send = (messageId: string, subject: string) =>
      provider.send({ messageId, from: 'a@example.com', to: 'b@example.org', subject, text: 'x', headers: [], disableProviderTracking: true });
    const answers = await Promise.all([send(ids[0], 'first'), send(ids[1], 'x'), send(ids[0], 'again'), send(ids[2], 'x')]);
    expect(answers.map((a) => a.providerMessageId)).to.deep.equal([ids[0], ids[1], ids[0], ids[2]].map((id) => `sandbox-${id}`));
    const rows = await testDb.db('sandbox_emails').whereIn('message_id', ids);
    expect(rows).to.have.length(3);
    expect(rows.find((r) => r.message_id === ids[0]).subject).to.equal('first');
  });
});
