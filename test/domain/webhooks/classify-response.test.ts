import { expect } from 'chai';
import { classifyAttempt, MAX_ATTEMPTS, nextAttemptDelay, parseRetryAfter } from '../../../src/domain/webhooks/classify-response.js';

describe('webhook attempt classification', () => {
  describe('classifyAttempt', () => {
    it('counts every 2xx as delivered', () => {
      for (const status of [200, 201, 202, 204, 299]) expect(classifyAttempt({ status }), String(status)).to.equal('delivered');
    });

    it('retries 408, 429 and every 5xx', () => {
      for (const status of [408, 429, 500, 502, 503, 504, 599]) expect(classifyAttempt({ status }), String(status)).to.equal('retry');
    });

    it('retries a 3xx (a redirect is never followed, so it is a failed attempt, not a permanent failure)', () => {
      for (const status of [300, 301, 302, 303, 304, 307, 308]) expect(classifyAttempt({ status }), String(status)).to.equal('retry');
    });

    it('fails permanently on any other 4xx', () => {
      for (const status of [400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 451, 499]) {
        expect(classifyAttempt({ status }), String(status)).to.equal('failed');
      }
    });

    it('retries a network error, a timeout and a missing status', () => {
      expect(classifyAttempt({ networkError: 'ECONNREFUSED' })).to.equal('retry');
      expect(classifyAttempt({ timedOut: true })).to.equal('retry');
      expect(classifyAttempt({ timedOut: true, networkError: 'no response within 15000 ms' })).to.equal('retry');
      expect(classifyAttempt({})).to.equal('retry');
    });

    it('retries when an error came with a status (the answer did not arrive whole)', () => {
      expect(classifyAttempt({ status: 200, networkError: 'socket hang up' })).to.equal('retry');
      expect(classifyAttempt({ status: 404, timedOut: true })).to.equal('retry');
    });

    it('retries informational and out-of-range statuses rather than dropping the event', () => {
      for (const status of [100, 199, 600, 999]) expect(classifyAttempt({ status }), String(status)).to.equal('retry');
    });
  });

  describe('nextAttemptDelay', () => {
    const delays = [60_000, 120_000, 240_000, 480_000, 960_000];

    it('gives the delay before attempt n+1 after attempt n failed: 1, 2, 4, 8, 16 minutes', () => {
      expect([1, 2, 3, 4, 5].map((n) => nextAttemptDelay(n, delays))).to.deep.equal(delays);
    });

    it('gives null after the 6th attempt, whatever the delays', () => {
      expect(MAX_ATTEMPTS).to.equal(6);
      expect(nextAttemptDelay(6, delays)).to.equal(null);
      expect(nextAttemptDelay(6, [...delays, 1, 2, 3])).to.equal(null);
      expect(nextAttemptDelay(7, delays)).to.equal(null);
    });

    it('gives null when the configured delays run out before the 6th attempt', () => {
      expect(nextAttemptDelay(2, [10])).to.equal(null);
      expect(nextAttemptDelay(1, [])).to.equal(null);
    });

    it('gives null for an attempt number that is not a positive integer', () => {
      for (const n of [0, -1, 1.5, NaN]) expect(nextAttemptDelay(n, delays), String(n)).to.equal(null);
    });
  });

  describe('parseRetryAfter', () => {
    const now = new Date('2024-05-01T12:00:00.000Z');

    it('reads delta-seconds', () => {
      expect(parseRetryAfter('120', now)).to.equal(120_000);
      expect(parseRetryAfter(' 0 ', now)).to.equal(0);
    });

    it('reads an HTTP-date relative to now (IMF-fixdate, RFC 850, asctime)', () => {
      expect(parseRetryAfter('Wed, 01 May 2024 12:05:00 GMT', now)).to.equal(300_000);
      expect(parseRetryAfter('Wednesday, 01-May-24 12:01:00 GMT', now)).to.equal(60_000);
      expect(parseRetryAfter('Wed May  1 12:00:30 2024', now)).to.equal(30_000);
    });

    it('reads a date in the past as no wait', () => {
      expect(parseRetryAfter('Wed, 01 May 2024 11:00:00 GMT', now)).to.equal(0);
    });

    it('caps the wait (an hour unless told otherwise)', () => {
      expect(parseRetryAfter('86400', now)).to.equal(3_600_000);
      expect(parseRetryAfter('Thu, 01 May 2025 12:00:00 GMT', now)).to.equal(3_600_000);
      expect(parseRetryAfter('600', now, 120_000)).to.equal(120_000);
    });

    it('gives null for absent or unreadable values', () => {
      for (const value of [undefined, null, '', '  ', 'soon', '-5', '1.5', '12abc', 'Someday, never']) {
        expect(parseRetryAfter(value, now), String(value)).to.equal(null);
      }
    });
  });
});
