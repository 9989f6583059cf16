import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { confirmSubscription } from '../../../src/adapters/sns-verify/confirm-subscription.js';
import { SnsConfirmationError } from '../../../src/adapters/sns-verify/sns-verification-error.js';
import { buildSnsStringToSign, createSnsMessageVerifier, SnsVerificationError } from '../../../src/adapters/sns-verify/verify-sns-message.js';
import { OTHER_TEST_KEY_PEM, signSnsMessage, startSnsCertServer, type SnsCertServer } from '../../support/sns-signing.js';

const opensslSigned = JSON.parse(readFileSync(new URL('../../fixtures/sns/openssl-signed-messages.json', import.meta.url), 'utf8'));

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

async function expectRefused(promise: Promise<unknown>, reason: RegExp) {
  const err = await rejection(promise);
  expect(err).to.be.instanceOf(SnsVerificationError);
  expect(err.message).to.match(reason);
}

const notification = {
  Type: 'Notification',
  MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
  TopicArn: 'arn:aws:sns:us-east-1:123456789012:ses-events',
  Message: '{"eventType":"Delivery","mail":{"messageId":"m-1"}}',
  Timestamp: '2024-05-01T12:00:00.000Z',
  UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:123456789012:ses-events:1',
};
const confirmation = (type: 'SubscriptionConfirmation' | 'UnsubscribeConfirmation', subscribeUrl: string) => ({
  Type: type,
  MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
  Token: '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
  TopicArn: 'arn:aws:sns:us-east-1:123456789012:ses-events',
  Message: 'You have chosen to subscribe to the topic arn:aws:sns:us-east-1:123456789012:ses-events.\nTo confirm the subscription, visit the SubscribeURL included in this message.',
  SubscribeURL: subscribeUrl,
  Timestamp: '2024-05-01T12:00:00.000Z',
});

describe('SNS message verification', () => {
  let server: SnsCertServer;
  beforeEach(async () => {
    server = await startSnsCertServer();
  });
  afterEach(async () => {
    await server.close();
  });
  const verifier = (extra: { fetchTimeoutMs?: number } = {}) => createSnsMessageVerifier({ certUrlPattern: server.pattern, ...extra });

  describe('buildSnsStringToSign', () => {
    it('lists a Notification as Message, MessageId, Subject, Timestamp, TopicArn, Type', () => {
      expect(buildSnsStringToSign({ ...notification, Subject: 'Hi', SignatureVersion: '1', Signature: 'x', SigningCertURL: 'y' })).to.equal(
        'Message\n{"eventType":"Delivery","mail":{"messageId":"m-1"}}\n' +
          'MessageId\n22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\n' +
          'Subject\nHi\n' +
          'Timestamp\n2024-05-01T12:00:00.000Z\n' +
          'TopicArn\narn:aws:sns:us-east-1:123456789012:ses-events\n' +
          'Type\nNotification\n',
      );
    });

    it('leaves Subject out of a Notification that has none', () => {
      expect(buildSnsStringToSign(notification)).to.not.include('Subject');
      expect(buildSnsStringToSign({ ...notification, Subject: null })).to.not.include('Subject');
    });

    it('lists confirmations as Message, MessageId, SubscribeURL, Timestamp, Token, TopicArn, Type', () => {
      const message = {
        Type: 'UnsubscribeConfirmation',
        MessageId: 'm-1',
        Token: 'tok',
        TopicArn: 'arn:t',
        Message: 'line one\nline two',
        SubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription',
        Timestamp: '2024-05-01T12:00:00.000Z',
        Subject: 'not signed in a confirmation',
      };
      expect(buildSnsStringToSign(message)).to.equal(
        'Message\nline one\nline two\n' +
          'MessageId\nm-1\n' +
          'SubscribeURL\nhttps://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription\n' +
          'Timestamp\n2024-05-01T12:00:00.000Z\n' +
          'Token\ntok\n' +
          'TopicArn\narn:t\n' +
          'Type\nUnsubscribeConfirmation\n',
      );
      expect(buildSnsStringToSign({ ...message, Type: 'SubscriptionConfirmation' })).to.match(/^Message\nline one\nline two\nMessageId\n.*Type\nSubscriptionConfirmation\n$/s);
    });

    it('refuses a message missing a signed key, or carrying a non-string in one', () => {
      const { Timestamp: _, ...noTimestamp } = notification;
      expect(() => buildSnsStringToSign(noTimestamp)).to.throw(SnsVerificationError, /Timestamp/);
      expect(() => buildSnsStringToSign({ ...notification, Message: { a: 1 } })).to.throw(SnsVerificationError, /Message/);
      expect(() => buildSnsStringToSign({ ...notification, Type: 'Other' })).to.throw(SnsVerificationError, /Type/);
    });
  });

  describe('messages signed with the openssl CLI (known answers)', () => {
    it('accepts a version 1 (SHA1withRSA) Notification', async () => {
      await verifier().verify({ ...opensslSigned.notificationV1, SigningCertURL: server.certUrl });
    });

    it('accepts a version 2 (SHA256withRSA) Notification', async () => {
      await verifier().verify({ ...opensslSigned.notificationV2, SigningCertURL: server.certUrl });
    });

    it('accepts a version 2 UnsubscribeConfirmation', async () => {
      await verifier().verify({ ...opensslSigned.unsubscribeConfirmationV2, SigningCertURL: server.certUrl });
    });

    it('refuses a version 1 signature presented as version 2, and the reverse', async () => {
      await expectRefused(verifier().verify({ ...opensslSigned.notificationV1, SignatureVersion: '2', SigningCertURL: server.certUrl }), /does not match/);
      await expectRefused(verifier().verify({ ...opensslSigned.notificationV2, SignatureVersion: '1', SigningCertURL: server.certUrl }), /does not match/);
    });
  });

  describe('valid messages', () => {
    for (const version of ['1', '2'] as const) {
      it(`accepts a version ${version} Notification with a Subject`, async () => {
        await verifier().verify(signSnsMessage({ ...notification, Subject: 'Amazon SES Email Event Notification' }, { version, certUrl: server.certUrl }));
      });

      it(`accepts a version ${version} Notification without a Subject`, async () => {
        await verifier().verify(signSnsMessage(notification, { version, certUrl: server.certUrl }));
      });

      it(`accepts a version ${version} SubscriptionConfirmation`, async () => {
        await verifier().verify(signSnsMessage(confirmation('SubscriptionConfirmation', server.subscribeUrl), { version, certUrl: server.certUrl }));
      });

      it(`accepts a version ${version} UnsubscribeConfirmation`, async () => {
        await verifier().verify(signSnsMessage(confirmation('UnsubscribeConfirmation', server.subscribeUrl), { version, certUrl: server.certUrl }));
      });
    }

    it('accepts a pattern with the global flag on every call (no lastIndex state)', async () => {
      const sticky = createSnsMessageVerifier({ certUrlPattern: new RegExp(server.pattern.source, 'g') });
      const message = signSnsMessage(notification, { version: '2', certUrl: server.certUrl });
      await sticky.verify(message);
      await sticky.verify(message);
    });
  });

  describe('tampered or wrongly signed messages', () => {
    it('refuses a tampered Message', async () => {
      const signed = signSnsMessage(notification, { version: '2', certUrl: server.certUrl });
      await expectRefused(verifier().verify({ ...signed, Message: signed.Message.replace('Delivery', 'Bounce') }), /does not match/);
    });

    it('refuses a Subject added, removed or changed after signing', async () => {
      const withSubject = signSnsMessage({ ...notification, Subject: 'Original' }, { version: '2', certUrl: server.certUrl });
      const { Subject: _, ...withoutSubject } = withSubject;
      await expectRefused(verifier().verify(withoutSubject), /does not match/);
      await expectRefused(verifier().verify({ ...withSubject, Subject: 'Changed' }), /does not match/);
      const noSubject = signSnsMessage(notification, { version: '2', certUrl: server.certUrl });
      await expectRefused(verifier().verify({ ...noSubject, Subject: 'Added' }), /does not match/);
    });

    it('refuses a SubscribeURL swapped after signing', async () => {
      const signed = signSnsMessage(confirmation('SubscriptionConfirmation', server.subscribeUrl), { version: '2', certUrl: server.certUrl });
      await expectRefused(verifier().verify({ ...signed, SubscribeURL: `${server.baseUrl}/confirm?Token=other` }), /does not match/);
    });

    it('refuses a Type changed after signing', async () => {
      const signed = signSnsMessage(confirmation('UnsubscribeConfirmation', server.subscribeUrl), { version: '2', certUrl: server.certUrl });
      await expectRefused(verifier().verify({ ...signed, Type: 'SubscriptionConfirmation' }), /does not match/);
    });

    it('refuses a message signed with another key', async () => {
      const signed = signSnsMessage(notification, { version: '2', certUrl: server.certUrl, privateKeyPem: OTHER_TEST_KEY_PEM });
      await expectRefused(verifier().verify(signed), /does not match/);
    });

    it("refuses a message whose SigningCertURL names another (allowed) certificate than the signer's", async () => {
      const signed = signSnsMessage(notification, { version: '1', certUrl: server.otherCertUrl });
      await expectRefused(verifier().verify(signed), /does not match/);
    });

    it('refuses a missing or non-base64 Signature without fetching', async () => {
      const signed = signSnsMessage(notification, { version: '2', certUrl: server.certUrl });
      const { Signature: _, ...unsigned } = signed;
      await expectRefused(verifier().verify(unsigned), /Signature/);
      await expectRefused(verifier().verify({ ...signed, Signature: 'not base64!' }), /Signature/);
      expect(server.requests).to.deep.equal([]);
    });
  });

  describe('refusals before any fetch', () => {
    it('refuses a SigningCertURL outside the pattern and never fetches it', async () => {
      const outside = [
        `${server.baseUrl.replace('127.0.0.1', 'localhost')}/SimpleNotificationService-test.pem`,
        server.certUrl.replace('http://', 'https://'),
        `http://127.0.0.2:${new URL(server.baseUrl).port}/SimpleNotificationService-test.pem`,
        'https://sns.us-east-1.amazonaws.com.evil.example/cert.pem',
        'file:///etc/passwd',
        '',
      ];
      for (const certUrl of outside) {
        await expectRefused(verifier().verify(signSnsMessage(notification, { version: '2', certUrl })), /SigningCertURL/);
      }
      const { SigningCertURL: _, ...noCertUrl } = signSnsMessage(notification, { version: '2', certUrl: server.certUrl });
      await expectRefused(verifier().verify(noCertUrl), /SigningCertURL/);
      expect(server.requests).to.deep.equal([]);
    });

    it('matches the production pattern only against the whole URL, scheme and host included', async () => {
      const production = createSnsMessageVerifier({
        certUrlPattern: /^https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\//,
        fetchCert: async () => {
          throw new Error('must not fetch');
        },
      });
      for (const certUrl of [
        'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem',
        'https://sns.us-east-1.amazonaws.com.evil.example/x.pem',
        'https://sns.us-east-1.amazonaws.com@evil.example/x.pem',
        'https://evil.example/https://sns.us-east-1.amazonaws.com/x.pem',
      ]) {
        await expectRefused(production.verify(signSnsMessage(notification, { version: '2', certUrl })), /SigningCertURL/);
      }
      // and an allowed one gets as far as fetching
      await expectRefused(
        production.verify(signSnsMessage(notification, { version: '2', certUrl: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-x.pem' })),
        /must not fetch/,
      );
    });

    it('refuses an unknown SignatureVersion', async () => {
      const signed = signSnsMessage(notification, { version: '2', certUrl: server.certUrl });
      for (const SignatureVersion of ['3', '0', '', 2, undefined]) {
        await expectRefused(verifier().verify({ ...signed, SignatureVersion }), /SignatureVersion/);
      }
      expect(server.requests).to.deep.equal([]);
    });

    it('refuses an unknown Type', async () => {
      const signed = signSnsMessage({ ...notification, Type: 'Notification' }, { version: '2', certUrl: server.certUrl });
      await expectRefused(verifier().verify({ ...signed, Type: 'SomethingElse' }), /Type/);
      expect(server.requests).to.deep.equal([]);
    });
  });

  describe('certificate fetching', () => {
    it('gives up on a certificate server that never answers, after the timeout', async () => {
      const started = Date.now();
      const signed = signSnsMessage(notification, { version: '2', certUrl: `${server.baseUrl}/hang.pem` });
      await expectRefused(verifier({ fetchTimeoutMs: 200 }).verify(signed), /certificate.*200 ms/);
      expect(Date.now() - started).to.be.within(150, 2000);
    });

    it('forgets a failed fetch, so the next message tries again', async () => {
      const v = verifier({ fetchTimeoutMs: 100 });
      const signed = signSnsMessage(notification, { version: '2', certUrl: `${server.baseUrl}/hang.pem` });
      await expectRefused(v.verify(signed), /certificate/);
      await expectRefused(v.verify(signed), /certificate/);
      expect(server.requests).to.deep.equal(['/hang.pem', '/hang.pem']);
    });

    it('refuses an oversized certificate, a 404 and a redirect (not followed)', async () => {
      for (const path of ['/huge.pem', '/missing.pem', '/redirect.pem']) {
        await expectRefused(verifier().verify(signSnsMessage(notification, { version: '2', certUrl: `${server.baseUrl}${path}` })), /certificate/);
      }
      expect(server.requests).to.deep.equal(['/huge.pem', '/missing.pem', '/redirect.pem']);
    });

    it('fetches a certificate once and reuses it for later messages', async () => {
      const v = verifier();
      await v.verify(signSnsMessage(notification, { version: '2', certUrl: server.certUrl }));
      await v.verify(signSnsMessage({ ...notification, MessageId: 'second' }, { version: '1', certUrl: server.certUrl }));
      expect(server.requests).to.deep.equal(['/SimpleNotificationService-test.pem']);
    });

    it('shares one in-flight fetch between concurrent messages', async () => {
      const v = verifier();
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => v.verify(signSnsMessage({ ...notification, MessageId: `m-${i}` }, { version: '2', certUrl: server.certUrl }))),
      );
      expect(server.requests).to.deep.equal(['/SimpleNotificationService-test.pem']);
    });

    it('still refuses a bad signature when the certificate is cached', async () => {
      const v = verifier();
      const signed = signSnsMessage(notification, { version: '2', certUrl: server.certUrl });
      await v.verify(signed);
      await expectRefused(v.verify({ ...signed, Message: '{}' }), /does not match/);
    });
  });

  describe('confirmSubscription', () => {
    it('GETs a SubscribeURL that matches the pattern', async () => {
      await confirmSubscription(confirmation('SubscriptionConfirmation', server.subscribeUrl), { certUrlPattern: server.pattern, timeoutMs: 1000 });
      expect(server.requests).to.deep.equal([new URL(server.subscribeUrl).pathname + new URL(server.subscribeUrl).search]);
    });

    it('is also a method of the verifier, with its pattern', async () => {
      await verifier().confirmSubscription(confirmation('SubscriptionConfirmation', server.subscribeUrl));
      expect(server.requests).to.have.length(1);
    });

    it('refuses a SubscribeURL outside the pattern and never requests it', async () => {
      const message = confirmation('SubscriptionConfirmation', server.subscribeUrl.replace('127.0.0.1', 'localhost'));
      await expectRefused(confirmSubscription(message, { certUrlPattern: server.pattern }), /SubscribeURL/);
      expect(server.requests).to.deep.equal([]);
    });

    it('refuses anything but a SubscriptionConfirmation', async () => {
      await expectRefused(
        confirmSubscription(confirmation('UnsubscribeConfirmation', server.subscribeUrl), { certUrlPattern: server.pattern }),
        /SubscriptionConfirmation/,
      );
      expect(server.requests).to.deep.equal([]);
    });

    it('reports a SubscribeURL that fails or hangs as SnsConfirmationError', async () => {
      const failing = await rejection(
        confirmSubscription(confirmation('SubscriptionConfirmation', `${server.baseUrl}/fail-confirm`), { certUrlPattern: server.pattern }),
      );
      expect(failing).to.be.instanceOf(SnsConfirmationError);
      expect(failing.message).to.match(/500/);
      const hanging = await rejection(
        confirmSubscription(confirmation('SubscriptionConfirmation', `${server.baseUrl}/hang.pem`), { certUrlPattern: server.pattern, timeoutMs: 100 }),
      );
      expect(hanging).to.be.instanceOf(SnsConfirmationError);
      expect(hanging.message).to.match(/100 ms/);
    });
  });
});
