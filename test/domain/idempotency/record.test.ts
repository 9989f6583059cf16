import { expect } from 'chai';
import { AppError } from '../../../src/domain/errors.js';
import {
  IDEMPOTENCY_TTL_MS,
  IN_PROGRESS_MESSAGE,
  MISMATCH_MESSAGE,
  CLAIM_LEASE_MS,
  idempotencyDecider,
  messageIdFor,
  type IdempotencyEvent,
} from '../../../src/domain/idempotency/record.js';
import { given } from '../../support/given.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();
const claim = (offsetMs: number, fingerprint = 'f1', token = 't2') => ({ kind: 'claim' as const, fingerprint, token, seed: 'snew', now: at(offsetMs) });
const CLAIMED: IdempotencyEvent = { type: 'IdempotencyKeyClaimed', data: { fingerprint: 'f1', token: 't1', seed: 's1', claimedAt: at(0) } };
const RESPONSE = { status: 201, body: { queued: true, messageLogId: 's1' } };
const COMPLETED: IdempotencyEvent = { type: 'IdempotencyRequestCompleted', data: { token: 't1', response: RESPONSE } };

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('idempotency record decider', () => {
  describe('claim', () => {
    it('a key never used: claimed, with the seed its message ids derive from', () => {
      expect(given(idempotencyDecider).when(claim(0, 'f1', 't1'))).to.deep.equal([
        { type: 'IdempotencyKeyClaimed', data: { fingerprint: 'f1', token: 't1', seed: 'snew', claimedAt: at(0) } },
      ]);
    });

    it('completed, same body, within 24 h: nothing new, the stored response is answered again', () => {
      const g = given(idempotencyDecider, [CLAIMED, COMPLETED]);
      expect(g.when(claim(IDEMPOTENCY_TTL_MS - 1))).to.deep.equal([]);
      expect(g.state).to.include({ status: 'completed' });
      expect((g.state as { response: unknown }).response).to.deep.equal(RESPONSE);
    });

    it('completed, different body: 409 mismatch', () => {
      const err = refusal(() => given(idempotencyDecider, [CLAIMED, COMPLETED]).when(claim(1000, 'f2')));
      expect([err.status, err.message]).to.deep.equal([409, MISMATCH_MESSAGE]);
    });

    it('in flight, same body: 409 in progress', () => {
      const err = refusal(() => given(idempotencyDecider, [CLAIMED]).when(claim(CLAIM_LEASE_MS - 1)));
      expect([err.status, err.message]).to.deep.equal([409, IN_PROGRESS_MESSAGE]);
    });

    it('in flight, different body: 409 mismatch (a different request is never the one in progress)', () => {
      const err = refusal(() => given(idempotencyDecider, [CLAIMED]).when(claim(1000, 'f2')));
      expect([err.status, err.message]).to.deep.equal([409, MISMATCH_MESSAGE]);
    });

    it('in flight and not renewed for a lease (its process died): retaken, keeping the seed', () => {
      const g = given(idempotencyDecider, [CLAIMED]);
      expect(g.when(claim(CLAIM_LEASE_MS))).to.deep.equal([{ type: 'IdempotencyClaimRetaken', data: { token: 't2', at: at(CLAIM_LEASE_MS) } }]);
      const after = given(idempotencyDecider, [CLAIMED, ...g.when(claim(CLAIM_LEASE_MS))]).state;
      expect(after).to.include({ status: 'in_flight', seed: 's1', token: 't2', claimedAt: at(0), heldSince: at(CLAIM_LEASE_MS) });
    });

    it('a retaken claim is in progress again for its new holder', () => {
      const retaken: IdempotencyEvent = { type: 'IdempotencyClaimRetaken', data: { token: 't2', at: at(CLAIM_LEASE_MS) } };
      const err = refusal(() => given(idempotencyDecider, [CLAIMED, retaken]).when(claim(CLAIM_LEASE_MS + 1000, 'f1', 't3')));
      expect(err.message).to.equal(IN_PROGRESS_MESSAGE);
    });

    it('after 24 h the key starts over, whatever the body, with a new seed', () => {
      for (const history of [[CLAIMED, COMPLETED], [CLAIMED]]) {
        expect(given(idempotencyDecider, history).when(claim(IDEMPOTENCY_TTL_MS, 'f2'))).to.deep.equal([
          { type: 'IdempotencyKeyClaimed', data: { fingerprint: 'f2', token: 't2', seed: 'snew', claimedAt: at(IDEMPOTENCY_TTL_MS) } },
        ]);
      }
    });

    it('a forgotten key (its request was refused) is claimed afresh, even with another body', () => {
      const forgotten: IdempotencyEvent = { type: 'IdempotencyKeyForgotten', data: { token: 't1', status: 400 } };
      expect(given(idempotencyDecider, [CLAIMED, forgotten]).when(claim(1000, 'f2'))).to.have.length(1);
    });
  });

  describe('renew', () => {
    const renew = (offsetMs: number, token = 't1') => ({ kind: 'renew' as const, token, now: at(offsetMs) });
    const RENEWED: IdempotencyEvent = { type: 'IdempotencyClaimRenewed', data: { token: 't1', at: at(CLAIM_LEASE_MS - 1) } };

    it('the holder renews its claim: its lease starts again', () => {
      expect(given(idempotencyDecider, [CLAIMED]).when(renew(CLAIM_LEASE_MS - 1))).to.deep.equal([RENEWED]);
      expect(given(idempotencyDecider, [CLAIMED, RENEWED]).state).to.include({ status: 'in_flight', token: 't1', claimedAt: at(0), heldSince: at(CLAIM_LEASE_MS - 1) });
    });

    it('a renewed claim is in progress for a lease from its renewal, then retaken', () => {
      const err = refusal(() => given(idempotencyDecider, [CLAIMED, RENEWED]).when(claim(2 * CLAIM_LEASE_MS - 2)));
      expect(err.message).to.equal(IN_PROGRESS_MESSAGE);
      expect(given(idempotencyDecider, [CLAIMED, RENEWED]).when(claim(2 * CLAIM_LEASE_MS - 1))).to.deep.equal([
        { type: 'IdempotencyClaimRetaken', data: { token: 't2', at: at(2 * CLAIM_LEASE_MS - 1) } },
      ]);
    });

    it('a holder whose claim was retaken, or that completed, renews nothing', () => {
      const retaken: IdempotencyEvent = { type: 'IdempotencyClaimRetaken', data: { token: 't2', at: at(CLAIM_LEASE_MS) } };
      expect(given(idempotencyDecider, [CLAIMED, retaken]).when(renew(CLAIM_LEASE_MS + 1))).to.deep.equal([]);
      expect(given(idempotencyDecider, [CLAIMED, COMPLETED]).when(renew(1000))).to.deep.equal([]);
      expect(given(idempotencyDecider).when(renew(1000))).to.deep.equal([]);
    });
  });

  describe('complete', () => {
    const complete = (status: number, token = 't1') => ({ kind: 'complete' as const, token, response: { status, body: { any: 1 } } });

    it('a success is remembered', () => {
      expect(given(idempotencyDecider, [CLAIMED]).when(complete(201))).to.deep.equal([
        { type: 'IdempotencyRequestCompleted', data: { token: 't1', response: { status: 201, body: { any: 1 } } } },
      ]);
    });

    for (const status of [400, 401, 409, 429, 500, 503]) {
      it(`a ${status} is forgotten: the client may correct it or try again`, () => {
        expect(given(idempotencyDecider, [CLAIMED]).when(complete(status))).to.deep.equal([{ type: 'IdempotencyKeyForgotten', data: { token: 't1', status } }]);
      });
    }

    it('a holder whose claim was retaken by another process writes nothing', () => {
      const retaken: IdempotencyEvent = { type: 'IdempotencyClaimRetaken', data: { token: 't2', at: at(CLAIM_LEASE_MS) } };
      expect(given(idempotencyDecider, [CLAIMED, retaken]).when(complete(201, 't1'))).to.deep.equal([]);
      expect(given(idempotencyDecider, [CLAIMED, retaken]).when(complete(500, 't1'))).to.deep.equal([]);
    });

    it('nothing to complete once completed or absent', () => {
      expect(given(idempotencyDecider, [CLAIMED, COMPLETED]).when(complete(201))).to.deep.equal([]);
      expect(given(idempotencyDecider).when(complete(201))).to.deep.equal([]);
    });
  });

  describe('messageIdFor', () => {
    it('the first message is the seed; the others derive from it, the same every time, shaped like a cuid2', () => {
      expect(messageIdFor('s1', 0)).to.equal('s1');
      expect(messageIdFor('s1', 3)).to.equal(messageIdFor('s1', 3));
      expect(messageIdFor('s1', 3)).to.not.equal(messageIdFor('s1', 4));
      expect(messageIdFor('s1', 1)).to.match(/^[a-z][0-9a-z]{23}$/);
    });
  });
});
