import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';

/**
 * `1e999` is valid JSON that parses as Infinity: with an Idempotency-Key it was a 500 (the
 * fingerprint's canonical form cannot write it), without one the send rendered `v=Infinity`, and a
 * campaign kept it as null. Every place template variables enter refuses it, naming the field.
 */
describe('numbers JSON can spell but not as a finite number (1e999): 400 naming the field', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  let templateId: string;
  const eventCount = async () => Number((await app.infra.db('events').count('* as n').first())?.n);

  before(async () => {
    app = await startTestApp();
    sender = await readyToSend(app, { scopes: ['send', 'read_events'] });
    templateId = (await app.request('POST', '/api/templates', { token: app.adminToken, body: { name: 't', subject: 'Hi {{x}}', html: '<p>v={{x}}</p>', text: 'v={{x}}' } })).body.id;
  });
  after(async () => {
    await app?.close();
  });

  const send = (variables: string, headers: Record<string, string> = {}) =>
    app.request('POST', '/api/send/transactional', {
      apiKey: sender.key,
      headers,
      body: `{"to":"a@example.org","fromEmail":"${sender.from}","subject":"s","html":"v={{x}}","text":"v={{x}}","variables":${variables}}`,
    });

  function expectRefused(res: { status: number; body: any }, message: string, what: string) {
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(400);
    expect(res.body, what).to.include({ message, error: 'Bad Request', statusCode: 400 });
  }

  it('a send, with an Idempotency-Key and without, appends nothing', async () => {
    const before = await eventCount();
    expectRefused(await send('{"x":1e999}', { 'idempotency-key': 'order-1' }), 'variables.x: must be a finite number', 'with a key');
    expectRefused(await send('{"x":-1e999}'), 'variables.x: must be a finite number', 'without a key');
    expectRefused(await send('{"x":{"y":[1,1e400]}}', { 'idempotency-key': 'order-2' }), 'variables.x.y.1: must be a finite number', 'nested');
    expect(await eventCount()).to.equal(before);
    // the key was not used up by the refusal: the fixed body goes through with it
    expect((await send('{"x":1e308}', { 'idempotency-key': 'order-1' })).status).to.equal(201);
  });

  it('a batch item answers its own 400', async () => {
    const res = await app.request('POST', '/api/send/batch', {
      apiKey: sender.key,
      headers: { 'idempotency-key': 'batch-1' },
      body: `{"messages":[{"to":"a@example.org","fromEmail":"${sender.from}","subject":"s","html":"h","text":"t","variables":{"x":1e999}},{"to":"b@example.org","fromEmail":"${sender.from}","subject":"s","html":"h","text":"t"}]}`,
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.items[0]).to.include({ status: 400, message: 'variables.x: must be a finite number' });
    expect(res.body.items[1]).to.include({ status: 201 });
  });

  it('a campaign, created or changed, and a template test send', async () => {
    const create = (variables: string) =>
      app.request('POST', '/api/campaigns', { token: app.adminToken, body: `{"name":"c","templateId":"${templateId}","fromEmail":"${sender.from}","audience":{},"variables":${variables}}` });
    expectRefused(await create('{"x":1e999}'), 'variables.x: must be a finite number', 'create');
    const campaign = await create('{"x":1}');
    expect(campaign.status, campaign.text).to.equal(201);
    expectRefused(await app.request('PATCH', `/api/campaigns/${campaign.body.id}`, { token: app.adminToken, body: '{"variables":{"x":-1e999}}' }), 'variables.x: must be a finite number', 'edit');
    expect((await app.request('GET', `/api/campaigns/${campaign.body.id}`, { token: app.adminToken })).body.variables).to.deep.equal({ x: 1 });
    expectRefused(
      await app.request('POST', `/api/templates/${templateId}/test`, { token: app.adminToken, body: `{"to":"a@example.org","fromEmail":"${sender.from}","variables":{"x":1e999}}` }),
      'variables.x: must be a finite number',
      'test send',
    );
  });
});
