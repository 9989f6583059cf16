import { expect } from 'chai';
import { verifyWebhookSignature } from '../../src/domain/webhooks/signature.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually } from '../support/email-setup.js';
import { hookRequests, newAccount, startScriptedReceiver, type ScriptedReceiver } from '../support/webhook-receiver.js';

describe('POST /api/webhooks/:id/rotate-secret: a new signing secret, at once or from a time ahead', function () {
  this.timeout(60_000);
  let app: TestApp;
  let receiver: ScriptedReceiver;
  before(async () => {
    app = await startTestApp();
    receiver = await startScriptedReceiver([200]);
  });
  after(async () => {
    await receiver?.close();
    await app?.close();
  });

  /** The secret that signed the delivery about `email`, of those given. */
  async function signedWith(email: string, secrets: string[]): Promise<string[]> {
    const request = await eventually(
      async () => hookRequests(receiver).find((r) => JSON.parse(r.body).data?.email === email),
      Boolean,
      20_000,
    );
    const h = request!.headers;
    return secrets.filter((s) => verifyWebhookSignature(s, String(h['x-service-timestamp']), request!.body, String(h['x-service-signature']), { now: new Date() }));
  }

  it('at once: the next delivery and the Test button sign with the new secret only; the answer and the list show it', async () => {
    const account = await newAccount(app);
    const hook = await account.subscribe(receiver.hook);
    const res = await account.call('POST', `/api/webhooks/${hook.id}/rotate-secret`, {});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const { newSecret, activeAt } = res.body;
    expect(newSecret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/).and.not.equal(hook.secret);
    expect(Date.parse(activeAt)).to.be.closeTo(Date.now(), 10_000);
    const listed = (await account.call('GET', '/api/webhooks')).body.items.find((w: any) => w.id === hook.id);
    expect(listed.secret).to.equal(newSecret);
    expect(listed).to.not.have.property('nextSecret');

    await account.suppress('rotated-now@example.org');
    expect(await signedWith('rotated-now@example.org', [hook.secret, newSecret])).to.deep.equal([newSecret]);
    expect((await account.call('POST', `/api/webhooks/${hook.id}/test`)).body).to.include({ delivered: true });
    const test = hookRequests(receiver).at(-1)!;
    expect(verifyWebhookSignature(newSecret, String(test.headers['x-service-timestamp']), test.body, String(test.headers['x-service-signature']), { now: new Date() })).to.equal(true);
  });

  it('from a time ahead: the old secret signs until then, the new one after; both are shown meanwhile', async () => {
    const account = await newAccount(app);
    const hook = await account.subscribe(receiver.hook);
    const at = new Date(Date.now() + 3_000).toISOString();
    const { newSecret, activeAt } = (await account.call('POST', `/api/webhooks/${hook.id}/rotate-secret`, { activeAt: at })).body;
    expect(activeAt).to.equal(at);
    const listed = (await account.call('GET', '/api/webhooks')).body.items.find((w: any) => w.id === hook.id);
    expect(listed).to.deep.include({ secret: hook.secret, nextSecret: newSecret, nextSecretAt: at });
    const revealed = (await account.call('POST', `/api/webhooks/${hook.id}/reveal-secret`)).body;
    expect(revealed).to.deep.equal({ id: hook.id, secret: hook.secret, nextSecret: newSecret, nextSecretAt: at });

    await account.suppress('before-switch@example.org');
    expect(await signedWith('before-switch@example.org', [hook.secret, newSecret])).to.deep.equal([hook.secret]);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(at) - Date.now() + 100)));
    await account.suppress('after-switch@example.org');
    expect(await signedWith('after-switch@example.org', [hook.secret, newSecret])).to.deep.equal([newSecret]);
    const after = (await account.call('GET', '/api/webhooks')).body.items.find((w: any) => w.id === hook.id);
    expect(after.secret).to.equal(newSecret);
    expect(after).to.not.have.property('nextSecret');
  });

  it('is in the audit trail without either secret; more than 7 days ahead is a 400; another account’s endpoint is a 404', async () => {
    const account = await newAccount(app);
    const hook = await account.subscribe(receiver.hook);
    const { newSecret } = (await account.call('POST', `/api/webhooks/${hook.id}/rotate-secret`, {})).body;
    const trail = await eventually(
      () => account.call('GET', '/api/audit?action=webhook.secret_rotated'),
      (r) => r.body.items?.length === 1,
    );
    expect(trail.body.items[0].target).to.deep.equal({ type: 'webhook', id: hook.id });
    expect(JSON.stringify(trail.body)).to.not.include(newSecret).and.not.include(hook.secret);

    const far = await account.call('POST', `/api/webhooks/${hook.id}/rotate-secret`, { activeAt: new Date(Date.now() + 8 * 86_400_000).toISOString() });
    expect([far.status, far.body.message, far.body.issues]).to.deep.equal([400, 'activeAt: at most 7 days ahead', [{ field: 'activeAt', message: 'at most 7 days ahead' }]]);
    expect((await account.call('POST', `/api/webhooks/${hook.id}/rotate-secret`, { activeAt: 'tomorrow' })).status).to.equal(400);
    const other = await newAccount(app);
    expect((await other.call('POST', `/api/webhooks/${hook.id}/rotate-secret`, {})).status).to.equal(404);
  });
});
