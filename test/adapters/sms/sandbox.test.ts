import { expect } from 'chai';
import { addSandboxOptOuts, createSandboxSmsProvider } from '../../../src/adapters/sms/sandbox.js';
import { createTestDatabase } from '../../support/db.js';
import { smsProviderContract } from './contract.js';

smsProviderContract('sandbox', async () => {
  const testDb = await createTestDatabase();
  const { db } = testDb;
  return {
    provider: createSandboxSmsProvider({ db }),
    async received(messageId) {
      const row = await db('sandbox_sms').where({ message_id: messageId }).first();
      return row && { to: row.to_number, body: row.body, originationNumber: row.from_number };
    },
    async setOptedOut(numbers) {
      await db('sandbox_sms_optouts').delete();
      await addSandboxOptOuts(db, numbers);
    },
    close: () => testDb.drop(),
  };
});

describe('sandbox SMS provider', () => {
  it('records a resent message id once, with the same provider id', async () => {
    const testDb = await createTestDatabase();
    try {
      const provider = createSandboxSmsProvider({ db: testDb.db });
      const sms = { messageId: 'm-1', to: '+14155550100', body: 'hi', originationNumber: '+18445550100' };
      const first = await provider.send(sms);
      const again = await provider.send({ ...sms, body: 'changed' });
      expect(again).to.deep.equal(first);
      const rows = await testDb.db('sandbox_sms').where({ message_id: 'm-1' });
      expect(rows.map((r) => r.body)).to.deep.equal(['hi']);
    } finally {
      await testDb.drop();
    }
  });
});
