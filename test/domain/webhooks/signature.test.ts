import { expect } from 'chai';
import { signWebhookPayload, verifyWebhookSignature } from '../../../src/domain/webhooks/signature.js';

/*
 * Known answers computed once with the openssl CLI, independently of node:crypto:
 *   printf '%s' '1700000000.{"id":"evt_1","event":"contact.unsubscribed"}' \
 *     | openssl dgst -sha256 -hmac 'whsec_test_secret' -binary | base64
 *   printf '%s' '1717171717.{"event":"contact.bounced","data":{"email":"zoë@example.com"}}' \
 *     | openssl dgst -sha256 -hmac 'sécret-ключ' -binary | base64        (UTF-8 shell)
 */
const ASCII_VECTOR = {
  secret: 'whsec_test_secret',
  timestamp: 1700000000,
  body: '{"id":"evt_1","event":"contact.unsubscribed"}',
  signature: 'v1=7Tb+8FMhDbsezYMxO1kqCu33yauM8Uoc1k4133SV804=',
};
const UTF8_VECTOR = {
  secret: 'sécret-ключ',
  timestamp: 1717171717,
  body: '{"event":"contact.bounced","data":{"email":"zoë@example.com"}}',
  signature: 'v1=uB/tHKH8t+eP894sPzwoAlJjLhtI/hW2r5dDLrOOxGk=',
};

describe('webhook signature', () => {
  describe('signWebhookPayload', () => {
    it('matches the openssl known answer', () => {
      expect(signWebhookPayload(ASCII_VECTOR.secret, ASCII_VECTOR.timestamp, ASCII_VECTOR.body)).to.equal(ASCII_VECTOR.signature);
    });

    it('keys the HMAC with the UTF-8 bytes of the secret and hashes the UTF-8 body', () => {
      expect(signWebhookPayload(UTF8_VECTOR.secret, UTF8_VECTOR.timestamp, UTF8_VECTOR.body)).to.equal(UTF8_VECTOR.signature);
    });

    it('changes with the timestamp, the body and the secret', () => {
      const base = signWebhookPayload('s', 1700000000, '{}');
      expect(signWebhookPayload('s', 1700000001, '{}')).to.not.equal(base);
      expect(signWebhookPayload('s', 1700000000, '{ }')).to.not.equal(base);
      expect(signWebhookPayload('t', 1700000000, '{}')).to.not.equal(base);
    });

    it('does not treat a base64-looking secret as its decoded bytes', () => {
      // 'c2VjcmV0' is base64 for 'secret': the key is the 8 characters, not the 6 decoded bytes
      expect(signWebhookPayload('c2VjcmV0', 1, 'x')).to.not.equal(signWebhookPayload('secret', 1, 'x'));
    });
  });

  describe('verifyWebhookSignature', () => {
    const now = new Date(ASCII_VECTOR.timestamp * 1000);
    const { secret, timestamp, body, signature } = ASCII_VECTOR;

    it('accepts the known answer, with the timestamp as a number or as the header string', () => {
      expect(verifyWebhookSignature(secret, timestamp, body, signature, { now })).to.equal(true);
      expect(verifyWebhookSignature(secret, String(timestamp), body, signature, { now })).to.equal(true);
      expect(verifyWebhookSignature(UTF8_VECTOR.secret, UTF8_VECTOR.timestamp, UTF8_VECTOR.body, UTF8_VECTOR.signature, { now: new Date(UTF8_VECTOR.timestamp * 1000) })).to.equal(true);
    });

    it('refuses a changed body, secret, timestamp or signature', () => {
      expect(verifyWebhookSignature(secret, timestamp, `${body} `, signature, { now })).to.equal(false);
      expect(verifyWebhookSignature('other', timestamp, body, signature, { now })).to.equal(false);
      expect(verifyWebhookSignature(secret, timestamp + 1, body, signature, { now })).to.equal(false);
      expect(verifyWebhookSignature(secret, timestamp, body, signature.replace('7Tb', '7Tc'), { now })).to.equal(false);
      expect(verifyWebhookSignature(secret, timestamp, body, signature.slice(3), { now })).to.equal(false);
      expect(verifyWebhookSignature(secret, timestamp, body, '', { now })).to.equal(false);
      expect(verifyWebhookSignature(secret, timestamp, body, undefined, { now })).to.equal(false);
    });

    it('accepts up to 300 seconds of skew either way, and refuses beyond', () => {
      const at = (offsetSeconds: number) => ({ now: new Date((timestamp + offsetSeconds) * 1000) });
      expect(verifyWebhookSignature(secret, timestamp, body, signature, at(300))).to.equal(true);
      expect(verifyWebhookSignature(secret, timestamp, body, signature, at(-300))).to.equal(true);
      expect(verifyWebhookSignature(secret, timestamp, body, signature, at(301))).to.equal(false);
      expect(verifyWebhookSignature(secret, timestamp, body, signature, at(-301))).to.equal(false);
    });

    it('takes another tolerance when asked', () => {
      const later = { now: new Date((timestamp + 60) * 1000) };
      expect(verifyWebhookSignature(secret, timestamp, body, signature, { ...later, toleranceSeconds: 30 })).to.equal(false);
      expect(verifyWebhookSignature(secret, timestamp, body, signature, { ...later, toleranceSeconds: 90 })).to.equal(true);
    });

    it('refuses a timestamp that is not plain unix seconds', () => {
      for (const ts of ['', ' ', '1700000000.5', '1e9', '0x6553F100', 'abc', '-1700000000']) {
        expect(verifyWebhookSignature(secret, ts, body, signature, { now }), ts).to.equal(false);
      }
    });

    it('accepts one matching signature among several space-separated ones', () => {
      const rotated = `v1=${Buffer.alloc(32).toString('base64')} ${signature}`;
      expect(verifyWebhookSignature(secret, timestamp, body, rotated, { now })).to.equal(true);
      expect(verifyWebhookSignature(secret, timestamp, body, `v1=${Buffer.alloc(32).toString('base64')} v1=abc`, { now })).to.equal(false);
    });
  });
});
