import { expect } from 'chai';
import type { HeldClaim, IdempotentRequests } from '../../src/commands/idempotency.js';
import { createIdempotencyGate, type IdempotentCall } from '../../src/http/idempotency.js';

/** A store of records whose completion the test lets through when it wants. */
function requestsWithHeldCompletion(completion: () => Promise<void>) {
  const written: unknown[] = [];
  const claim = { seed: 'seed', token: 'token', scope: 'key:x', key: 'k' } as unknown as HeldClaim;
  const requests = {
    claim: async () => ({ kind: 'claimed' as const, claim, retaken: false }),
    renew: async () => true,
    complete: async (_: HeldClaim, response: unknown) => {
      await completion();
      written.push(response);
    },
  } as unknown as IdempotentRequests;
  return { requests, written };
}

const call = (handle: IdempotentCall['handle']): IdempotentCall => ({ scope: 'key:x', key: 'k', fingerprint: 'f', verifyCaller: async () => undefined, handle });

describe('the Idempotency-Key gate', () => {
  it('answers only once the answer is recorded: a retry sent at once to another API process finds the record, not a claim in flight', async () => {
    let release!: () => void;
    const { requests, written } = requestsWithHeldCompletion(() => new Promise<void>((resolve) => (release = resolve)));
    let answered = false;
    const running = createIdempotencyGate({ requests })(call(async () => ({ status: 201, body: { id: 'm1' } }))).then((result) => {
      answered = true;
      return result;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(answered).to.equal(false);
    release();
    expect(await running).to.deep.equal({ status: 201, body: { id: 'm1' } });
    expect(written).to.deep.equal([{ status: 201, body: { id: 'm1' } }]);
  });

  it('a record that cannot be written does not change the answer; the failure is reported', async () => {
    const errors: unknown[] = [];
    const { requests } = requestsWithHeldCompletion(() => Promise.reject(new Error('database away')));
    const result = await createIdempotencyGate({ requests, onError: (err) => errors.push(err) })(call(async () => ({ status: 201, body: { id: 'm2' } })));
    expect(result).to.deep.equal({ status: 201, body: { id: 'm2' } });
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['database away']);
  });
});
