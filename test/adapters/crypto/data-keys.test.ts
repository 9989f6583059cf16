import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { createDataKeys } from '../../../src/adapters/crypto/data-keys.js';
import { createMasterKey } from '../../../src/adapters/crypto/master-key.js';
import { createMemoryKeyStore } from '../../../src/adapters/crypto/memory-key-store.js';

describe('Data keys', function () {
  const master = createMasterKey(randomBytes(32));

  it('readers asking for keys at the same moment share one lookup, and each gets its own keys (null for one destroyed)', async () => {
    const store = createMemoryKeyStore();
    const asked: string[][] = [];
    const counting = { ...store, find: (ids: string[]) => (asked.push(ids), store.find(ids)) };
    const writer = createDataKeys({ store, master });
    const made = Array.from({ length: 300 }, (_, i) => writer.keyFor({ accountId: 'acc', person: `p${i}`, scope: 'person' }));
    await writer.storeAlone(writer.claim(made));
    await store.erase('acc', 'p7');

    const cold = createDataKeys({ store: counting, master });
    const answers = await Promise.all(made.map((k, i) => cold.byIds([{ id: k.id, accountId: 'acc', person: `p${i}` }])));

    answers.forEach((answer, i) => {
      expect([...answer.keys()]).to.deep.equal([made[i].id]);
      if (i === 7) expect(answer.get(made[i].id)).to.equal(null);
      else expect(answer.get(made[i].id)!.equals(made[i].key)).to.equal(true);
    });
    // 300 readers in two statements (at most 200 readers each), not 300
    expect(asked.map((ids) => ids.length)).to.deep.equal([200, 100]);
    // and what it learnt is cached, destroyed keys included
    await cold.byIds(made.map((k) => ({ id: k.id })));
    expect(asked).to.have.length(2);
  });

  it('an id nobody stored reads as null', async () => {
    const keys = createDataKeys({ store: createMemoryKeyStore(), master });
    const id = randomUUID();
    expect((await keys.byIds([{ id }])).get(id)).to.equal(null);
  });
});
