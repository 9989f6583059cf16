import { expect } from 'chai';
import { MESSAGE_ID_ATTRIBUTE, createSnsSmsProvider } from '../../../src/adapters/sms/sns.js';
import { ProviderError } from '../../../src/ports/email-provider.js';
import { FAKE_AWS_CREDENTIALS, startFakeSns, type FakeSns, type SnsFault } from '../../support/fake-sns.js';
import { smsProviderContract } from './contract.js';

const provider = (fake: FakeSns, extra: Partial<Parameters<typeof createSnsSmsProvider>[0]> = {}) =>
  createSnsSmsProvider({ region: 'us-east-1', endpoint: fake.url, credentials: FAKE_AWS_CREDENTIALS, maxAttempts: 1, ...extra });

smsProviderContract('SNS (real @aws-sdk/client-sns against a local query-protocol server)', async () => {
  const fake = await startFakeSns();
  return {
    provider: provider(fake),
    async received(messageId) {
      const p = fake.published.find((x) => x.attributes[MESSAGE_ID_ATTRIBUTE]?.stringValue === messageId);
      return p && { to: p.phoneNumber, body: p.message, originationNumber: p.attributes['AWS.MM.SMS.OriginationNumber'].stringValue };
    },
    async setOptedOut(numbers) {
      fake.optedOut = [...numbers];
    },
    failNextSend(kind) {
      fake.failPublish(kind === 'retryable' ? { status: 429, code: 'Throttled', message: 'Rate exceeded' } : { status: 400, code: 'InvalidParameter', message: 'Invalid parameter: PhoneNumber' });
    },
    close: () => fake.close(),
  };
});

describe('SNS SMS provider', () => {
  let fake: FakeSns;
  beforeEach(async () => {
    fake = await startFakeSns();
  });
  afterEach(async () => fake.close());

  it('publishes as Transactional with the origination number and our message id', async () => {
    const result = await provider(fake).send({ messageId: 'm-42', to: '+14155550100', body: 'hello', originationNumber: '+18445550100' });
    expect(fake.published).to.have.length(1);
    const [p] = fake.published;
    expect(result.providerMessageId).to.equal(p.messageId);
    expect(p.phoneNumber).to.equal('+14155550100');
    expect(p.attributes).to.deep.equal({
      'AWS.SNS.SMS.SMSType': { dataType: 'String', stringValue: 'Transactional' },
      'AWS.MM.SMS.OriginationNumber': { dataType: 'String', stringValue: '+18445550100' },
      [MESSAGE_ID_ATTRIBUTE]: { dataType: 'String', stringValue: 'm-42' },
    });
  });

  const cases: Array<[string, SnsFault, boolean]> = [
    ['Throttled (429)', { status: 429, code: 'Throttled' }, true],
    ['InternalError (500)', { status: 500, code: 'InternalError' }, true],
    ['an unknown 503', { status: 503, code: 'ServiceUnavailable' }, true],
    ['InvalidParameter (400)', { status: 400, code: 'InvalidParameter' }, false],
    ['AuthorizationError (403)', { status: 403, code: 'AuthorizationError' }, false],
    ['OptedOut (400)', { status: 400, code: 'OptedOut' }, false],
    ['KMSThrottling (400)', { status: 400, code: 'KMSThrottling' }, true],
  ];
  for (const [name, fault, retryable] of cases) {
    it(`maps ${name} to a ${retryable ? 'retryable' : 'permanent'} ProviderError naming the code`, async () => {
      fake.failPublish({ ...fault, message: `boom ${fault.code}` });
      const err = await provider(fake).send({ messageId: 'm', to: '+14155550100', body: 'x', originationNumber: '+18445550100' }).catch((e) => e);
      expect(err).to.be.instanceOf(ProviderError);
      expect(err.retryable).to.equal(retryable);
      expect(err.message).to.include(`boom ${fault.code}`);
    });
  }

  it('a refused connection and a hung request are retryable', async () => {
    const closed = provider(fake);
    const held = fake.hold('Publish');
    const timedOut = await provider(fake, { requestTimeoutMs: 300 }).send({ messageId: 'm', to: '+14155550100', body: 'x', originationNumber: '+18445550100' }).catch((e) => e);
    held();
    expect(timedOut).to.be.instanceOf(ProviderError).with.property('retryable', true);
    await fake.close();
    const refused = await closed.send({ messageId: 'm', to: '+14155550100', body: 'x', originationNumber: '+18445550100' }).catch((e) => e);
    expect(refused).to.be.instanceOf(ProviderError).with.property('retryable', true);
  });

  it('the SDK retries a throttled Publish on its own when allowed more attempts', async () => {
    fake.failPublish({ status: 429, code: 'Throttled' });
    const result = await provider(fake, { maxAttempts: 3 }).send({ messageId: 'm', to: '+14155550100', body: 'x', originationNumber: '+18445550100' });
    expect(result.providerMessageId).to.equal(fake.published[0].messageId);
    expect(fake.calls.Publish).to.equal(2);
  });

  it('follows nextToken through ListPhoneNumbersOptedOut; a bad token is a permanent error', async () => {
    fake.optedOut = ['+14155550101', '+14155550102', '+14155550103'];
    fake.pageSize = 2;
    const first = await provider(fake).listOptedOut();
    expect(first.phoneNumbers).to.deep.equal(['+14155550101', '+14155550102']);
    expect(first.nextToken).to.be.a('string');
    expect(await provider(fake).listOptedOut(first.nextToken)).to.deep.equal({ phoneNumbers: ['+14155550103'] });
    const err = await provider(fake).listOptedOut('bogus').catch((e) => e);
    expect(err).to.be.instanceOf(ProviderError).with.property('retryable', false);
  });
});
