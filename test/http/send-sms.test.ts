import { expect } from 'chai';
import { addSandboxOptOuts } from '../../src/adapters/sms/sandbox.js';
import { MESSAGE_ID_ATTRIBUTE } from '../../src/adapters/sms/sns.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { startFakeSns, type FakeSns } from '../support/fake-sns.js';
import { ORIGINATION, readyToSendSms, setSms } from '../support/sms-setup.js';
import { useFakeAwsCredentials } from '../support/aws-credentials.js';

const TO = '+14155550100';

function expectError(res: { status: number; body: any }, status: number, message: string | RegExp) {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  // a validation error adds the list of every problem; nothing else is added to the error shape
  expect(Object.keys(res.body).filter((k) => k !== 'issues')).to.have.members(['message', 'error', 'statusCode']);
  expect(res.body.statusCode).to.equal(status);
  if (typeof message === 'string') expect(res.body.message).to.equal(message);
  else expect(res.body.message).to.match(message);
}

/** GET /api/messages/:id once the message reached `status`. */
const messageWithStatus = (app: TestApp, key: string, id: string, status: string) =>
  eventually(
    () => app.request('GET', `/api/messages/${id}`, { apiKey: key }),
    (r) => r.status === 200 && r.body.status === status,
  ).then((r) => r.body);

describe('POST /api/send/sms, sandbox provider', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  const send = (body: unknown, apiKey = key) => app.request('POST', '/api/send/sms', { apiKey, body });

  before(async () => {
    app = await startTestApp();
    ({ key } = await readyToSendSms(app));
  });
  after(async () => app?.close());

  it('201 {queued, messageLogId, segments, encoding}; the provider gets it and the message ends sent', async () => {
    const res = await send({ to: TO, body: 'Your code is 123456' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.deep.equal({ queued: true, messageLogId: res.body.messageLogId, segments: 1, encoding: 'gsm7' });
    const id = res.body.messageLogId;
    const row = await eventually(
      () => app.infra.db('sandbox_sms').where({ message_id: id }).first(),
      (r) => Boolean(r),
    );
    expect(row).to.include({ to_number: TO, from_number: ORIGINATION, body: 'Your code is 123456' });

    const message = await messageWithStatus(app, key, id, 'sent');
    expect(message).to.include({ id, channel: 'sms', status: 'sent', to: TO, from: ORIGINATION, provider: 'sandbox', providerMessageId: `sandbox-${id}`, segments: 1, encoding: 'gsm7', subject: null });
    expect(message.events.map((e: { type: string }) => e.type)).to.include('sent');
    const history = await app.request('GET', `/api/messages/${id}/history`, { token: app.adminToken });
    expect(history.body.map((e: { type: string }) => e.type)).to.deep.equal(['SmsQueued', 'ProviderAccepted']);
    const list = await app.request('GET', '/api/messages?limit=100', { apiKey: key });
    expect(list.body.items.map((m: { id: string }) => m.id)).to.include(id);
  });

  it('accepts a 10-digit US number and sends to it as +1…', async () => {
    const res = await send({ to: '(415) 555-0123', body: 'hi' });
    expect(res.status).to.equal(201);
    const row = await eventually(
      () => app.infra.db('sandbox_sms').where({ message_id: res.body.messageLogId }).first(),
      (r) => Boolean(r),
    );
    expect(row.to_number).to.equal('+14155550123');
  });

  it('answers the encoding and segment count SNS would bill', async () => {
    const ucs2 = await send({ to: TO, body: '😜' + 'a'.repeat(69) });
    expect(ucs2.body).to.include({ segments: 2, encoding: 'ucs2' });
    const ext = await send({ to: TO, body: '€'.repeat(81) });
    expect(ext.body).to.include({ segments: 2, encoding: 'gsm7' });
    const tenGsm = await send({ to: TO, body: 'a'.repeat(1530) });
    expect(tenGsm.status).to.equal(201);
    expect(tenGsm.body).to.include({ segments: 10, encoding: 'gsm7' });
    const tenUcs2 = await send({ to: TO, body: 'ж'.repeat(670) });
    expect(tenUcs2.body).to.include({ segments: 10, encoding: 'ucs2' });
    const message = await messageWithStatus(app, key, tenUcs2.body.messageLogId, 'sent');
    expect(message).to.include({ segments: 10, encoding: 'ucs2' });
  });

  it('400 body too long: more than 10 segments, in either encoding', async () => {
    expectError(await send({ to: TO, body: 'a'.repeat(1531) }), 400, 'body is too long: 11 segments (gsm7), at most 10 allowed');
    expectError(await send({ to: TO, body: 'ж'.repeat(671) }), 400, 'body is too long: 11 segments (ucs2), at most 10 allowed');
    expectError(await send({ to: TO, body: '{'.repeat(766) }), 400, 'body is too long: 11 segments (gsm7), at most 10 allowed');
    expectError(await send({ to: TO, body: 'a'.repeat(20_001) }), 400, 'body: body is too long: more than 10 segments');
  });

  it('400 body missing or empty; to missing; unknown fields', async () => {
    // a field left out reads `required`, as on every route
    expectError(await send({ to: TO }), 400, 'body: required');
    expectError(await send({ to: TO, body: '' }), 400, 'body: must not be empty');
    expectError(await send({ to: TO, body: 42 }), 400, 'body: body must be a string');
    expectError(await send({ body: 'hi' }), 400, 'to: required');
    expectError(await send({ to: ' ', body: 'hi' }), 400, 'to: must not be empty');
    const empty = await send({});
    expect(empty.body.issues).to.deep.equal([{ field: 'to', message: 'required' }, { field: 'body', message: 'required' }]);
    // a number given as a JSON number is no missing number
    expectError(await send({ to: 14155550100, body: 'hi' }), 400, 'to: to must be a string: a phone number in E.164, such as "+14155550100"');
    expectError(await send({ to: TO, body: 'hi', from: '+18445550199' }), 400, /from/);
    expectError(await send('not json'), 400, /.+/);
  });

  it('400 invalid phone, saying so', async () => {
    for (const to of ['not-a-phone', '12345', '+1415555010', '+15555550100', '+999123456789']) {
      expectError(await send({ to, body: 'hi' }), 400, `${to} is not a valid phone number (E.164, or a 10-digit US number)`);
    }
    expectError(await send({ to: '9'.repeat(65), body: 'hi' }), 400, 'to: to is not a valid phone number');
  });

  it('400 opted-out number (after the opt-out sync), and 400 <number> is suppressed for a manual suppression', async () => {
    await addSandboxOptOuts(app.infra.db, ['+14155550142']);
    const sync = await app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken });
    expect(sync.status).to.equal(200);
    expectError(await send({ to: '+14155550142', body: 'hi' }), 400, '+14155550142 has opted out of SMS');
    expectError(await send({ to: '415-555-0142', body: 'hi' }), 400, '+14155550142 has opted out of SMS');
    const manual = await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { phone: '+14155550143' } });
    expect(manual.status).to.equal(201);
    expectError(await send({ to: '+14155550143', body: 'hi' }), 400, '+14155550143 is suppressed');
  });

  it('sends arriving together (checked in one statement) are each answered on their own', async () => {
    await addSandboxOptOuts(app.infra.db, ['+14155550152']);
    expect((await app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken })).status).to.equal(200);
    expect((await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { phone: '+14155550153' } })).status).to.equal(201);
    const [optedOut, suppressed, ok, again] = await Promise.all(
      ['+14155550152', '+14155550153', TO, '+14155550152'].map((to) => send({ to, body: 'together' })),
    );
    expectError(optedOut, 400, '+14155550152 has opted out of SMS');
    expectError(suppressed, 400, '+14155550153 is suppressed');
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    expectError(again, 400, '+14155550152 has opted out of SMS');
  });

  it('400 sandbox restriction: in the SMS sandbox only listed destinations receive', async () => {
    await setSms(app, { sandbox: true, sandboxDestinations: ['+14155550150'] });
    try {
      expectError(await send({ to: '+14155550151', body: 'hi' }), 400, "+14155550151 is not a verified sandbox destination (the account's SMS is in sandbox mode)");
      expect((await send({ to: '(415) 555-0150', body: 'hi' })).status).to.equal(201);
    } finally {
      await setSms(app, {});
    }
  });

  it('400 SMS not enabled; 400 no origination number', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'No SMS', email: 'owner@nosms.example', password: 'nosms-password' } });
    const token = signup.body.token;
    const other = await app.request('POST', '/api/api-keys', { token, body: { name: 'k', scopes: ['sms:send'] } });
    expectError(await send({ to: TO, body: 'hi' }, other.body.key), 400, 'SMS is not enabled for this account');
    await setSms(app, { enabled: true, originationNumber: null }, token);
    expectError(await send({ to: TO, body: 'hi' }, other.body.key), 400, 'no origination number is provisioned for this account');
    await setSms(app, {}, token);
    expect((await send({ to: TO, body: 'hi' }, other.body.key)).status).to.equal(201);
  });

  it('401 missing, unknown or revoked key; 403 without the sms:send scope; a dashboard JWT is no key', async () => {
    expectError(await app.request('POST', '/api/send/sms', { body: { to: TO, body: 'hi' } }), 401, 'invalid API key');
    expectError(await send({ to: TO, body: 'hi' }, 'cl_not-a-real-key'), 401, 'invalid API key');
    const revoked = await app.createApiKey(['sms:send']);
    expect((await send({ to: TO, body: 'hi' }, revoked.key)).status).to.equal(201);
    await app.request('DELETE', `/api/api-keys/${revoked.id}`, { token: app.adminToken });
    expectError(await send({ to: TO, body: 'hi' }, revoked.key), 401, 'invalid API key');
    const emailOnly = await app.createApiKey(['send', 'read_events']);
    expectError(await send({ to: TO, body: 'hi' }, emailOnly.key), 403, 'API key is missing required scope: sms:send');
    const jwt = await app.request('POST', '/api/send/sms', { token: app.adminToken, body: { to: TO, body: 'hi' } });
    expect(jwt.status).to.be.oneOf([401, 403]);
  });

  it('400 daily send limit reached for this API key', async () => {
    const limited = await app.createApiKey(['sms:send'], { dailyLimit: 1 });
    expect((await send({ to: TO, body: 'hi' }, limited.key)).status).to.equal(201);
    expectError(await send({ to: TO, body: 'hi' }, limited.key), 400, 'daily send limit reached for this API key');
  });

  it('429: email and SMS share the account daily cap', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Shared cap', email: 'owner@shared.example', password: 'shared-password' } });
    const token = signup.body.token;
    expect((await app.request('PATCH', '/api/settings', { token, body: { dailySendCap: 3 } })).status).to.equal(200);
    const email = await readyToSend(app, { token, domain: 'shared.example', scopes: ['send'] });
    const sms = await readyToSendSms(app, { token, scopes: ['sms:send'] });
    const sendEmail = () =>
      app.request('POST', '/api/send/transactional', { apiKey: email.key, body: { to: 'r@example.org', fromEmail: email.from, subject: 's', html: '<p>x</p>', text: 'x' } });
    expect((await sendEmail()).status).to.equal(201);
    expect((await sendEmail()).status).to.equal(201);
    expect((await send({ to: TO, body: 'third' }, sms.key)).status).to.equal(201);
    expectError(await send({ to: TO, body: 'fourth' }, sms.key), 429, 'Daily send limit reached');
    expectError(await sendEmail(), 429, 'Daily send limit reached');
  });

  it('a refused send (400) takes no slot of the account cap', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'One', email: 'owner@one.example', password: 'one-password' } });
    const token = signup.body.token;
    await app.request('PATCH', '/api/settings', { token, body: { dailySendCap: 1 } });
    const sms = await readyToSendSms(app, { token, scopes: ['sms:send'] });
    expect((await send({ to: 'nope', body: 'x' }, sms.key)).status).to.equal(400);
    expect((await send({ to: TO, body: 'a'.repeat(1531) }, sms.key)).status).to.equal(400);
    expect((await send({ to: TO, body: 'x' }, sms.key)).status).to.equal(201);
  });
});

describe('POST /api/send/sms through SNS (real SDK against a local SNS)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: FakeSns;
  let key: string;
  let restoreEnv: () => void;
  const send = (body: unknown) => app.request('POST', '/api/send/sms', { apiKey: key, body });

  before(async () => {
    restoreEnv = useFakeAwsCredentials();
    fake = await startFakeSns();
    app = await startTestApp({ SMS_PROVIDER: 'sns', AWS_ENDPOINT_URL_SNS: fake.url, PROVIDER_RETRY_DELAYS_MS: '500,500,500,500,500' });
    ({ key } = await readyToSendSms(app));
  });
  after(async () => {
    await app?.close();
    await fake?.close();
    restoreEnv?.();
  });

  it('publishes Transactional from the origination number with our message id; the message ends sent with the SNS MessageId', async () => {
    const res = await send({ to: '4155550100', body: 'Grüße 😜' });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ segments: 1, encoding: 'ucs2' });
    const id = res.body.messageLogId;
    const message = await messageWithStatus(app, key, id, 'sent');
    const published = fake.published.find((p) => p.attributes[MESSAGE_ID_ATTRIBUTE]?.stringValue === id)!;
    expect(published).to.include({ phoneNumber: TO, message: 'Grüße 😜' });
    expect(published.attributes['AWS.SNS.SMS.SMSType'].stringValue).to.equal('Transactional');
    expect(published.attributes['AWS.MM.SMS.OriginationNumber'].stringValue).to.equal(ORIGINATION);
    expect(message).to.include({ status: 'sent', provider: 'sns', providerMessageId: published.messageId, from: ORIGINATION, to: TO });
  });

  it('a permanent SNS error fails the message at once, with the error', async () => {
    fake.failPublish({ status: 400, code: 'InvalidParameter', message: 'Invalid parameter: PhoneNumber Reason: unreachable' });
    const res = await send({ to: TO, body: 'doomed' });
    const message = await messageWithStatus(app, key, res.body.messageLogId, 'failed');
    expect(message.error).to.include('Invalid parameter: PhoneNumber Reason: unreachable');
    expect(fake.published.some((p) => p.message === 'doomed')).to.equal(false);
  });

  it('one SDK attempt per Publish: a 500 is one request to SNS, and the send job’s own retry finishes it', async function () {
    this.timeout(40_000);
    // An SDK retry after a Publish that SNS accepted but answered late would be a second SMS.
    fake.failPublish({ status: 500, code: 'InternalError', message: 'try again' });
    const before = fake.calls.Publish ?? 0;
    const res = await send({ to: TO, body: 'once per attempt' });
    const id = res.body.messageLogId;
    await eventually(
      () => app.request('GET', `/api/messages/${id}/history`, { token: app.adminToken }),
      (r) => r.body.some((e: { type: string }) => e.type === 'ProviderAttemptFailed'),
    );
    expect((fake.calls.Publish ?? 0) - before).to.equal(1);
    await messageWithStatus(app, key, id, 'sent');
    expect((fake.calls.Publish ?? 0) - before).to.equal(2);
  });

  it('a throttled Publish is retried until SNS takes it; the message ends sent', async function () {
    this.timeout(40_000);
    // the SDK makes one attempt per call, so each throttle is a failed attempt of the send job's own
    const throttled = { status: 429, code: 'Throttled', message: 'Rate exceeded' };
    fake.failPublish(throttled, throttled, throttled);
    const res = await send({ to: TO, body: 'persistent' });
    const id = res.body.messageLogId;
    const failedOnce = await eventually(
      () => app.request('GET', `/api/messages/${id}/history`, { token: app.adminToken }),
      (r) => r.body.some((e: { type: string }) => e.type === 'ProviderAttemptFailed'),
    );
    expect(failedOnce.body.find((e: { type: string }) => e.type === 'ProviderAttemptFailed').data.error).to.include('Rate exceeded');
    const message = await eventually(
      () => app.request('GET', `/api/messages/${id}`, { apiKey: key }),
      (r) => r.body.status === 'sent',
      30_000,
    );
    expect(message.body.providerMessageId).to.equal(fake.published.find((p) => p.message === 'persistent')!.messageId);
  });
});

describe('POST /api/send/sms with the default SMS_PROVIDER', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: FakeSns;
  let restoreEnv: () => void;

  before(async () => {
    restoreEnv = useFakeAwsCredentials();
    fake = await startFakeSns();
    // an empty value counts as unset: the server's own default, with only the SDK's endpoint variable pointing at the fake
    app = await startTestApp({ SMS_PROVIDER: '', AWS_ENDPOINT_URL_SNS: fake.url });
  });
  after(async () => {
    await app?.close();
    await fake?.close();
    restoreEnv?.();
  });

  it('an account with SMS enabled sends through SNS, not the sandbox', async () => {
    expect(app.config.SMS_PROVIDER).to.equal('sns');
    const { key } = await readyToSendSms(app);
    const res = await app.request('POST', '/api/send/sms', { apiKey: key, body: { to: TO, body: 'Your code is 654321' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const id = res.body.messageLogId;
    const message = await messageWithStatus(app, key, id, 'sent');
    const published = fake.published.find((p) => p.attributes[MESSAGE_ID_ATTRIBUTE]?.stringValue === id);
    expect(published).to.include({ phoneNumber: TO, message: 'Your code is 654321' });
    expect(message).to.include({ provider: 'sns', providerMessageId: published!.messageId });
    expect(await app.infra.db('sandbox_sms').where({ message_id: id }).first()).to.equal(undefined);
  });
});
