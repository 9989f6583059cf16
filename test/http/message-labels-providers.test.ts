import { expect } from 'chai';
import type { TestApp } from '../support/app.js';
import { startAppWithFakeProviders, type AppWithFakeProviders } from '../support/app-with-fake-providers.js';
import { eventually, switchProvider } from '../support/email-setup.js';
import type { FakePostmark } from '../support/fake-postmark.js';
import type { FakeSes } from '../support/fake-ses.js';

describe('tags and metadata of a batch reach the provider (fake SES v2 and fake Postmark, real SDKs)', function () {
  this.timeout(60_000);
  let providers: AppWithFakeProviders | undefined;
  let app: TestApp;
  let ses: FakeSes;
  let postmark: FakePostmark;
  let key: string;
  const req = (method: string, path: string, body?: unknown) => app.request(method, path, { token: app.adminToken, body });
  const batch = () =>
    app.request('POST', '/api/send/batch', {
      apiKey: key,
      body: {
        messages: [
          { to: 'ada@example.org', fromEmail: 'app@news.example.com', subject: 'Hi', html: '<p>Hi</p>', text: 'Hi', tags: ['receipt', 'eu:west'], metadata: { orderId: '1042', 'Größe': 'XL' } },
        ],
      },
    });

  before(async () => {
    providers = await startAppWithFakeProviders();
    ({ app, ses, pm: postmark } = providers);
    expect((await req('PATCH', '/api/settings', { emailProvider: 'ses' })).status).to.equal(200);
    const domain = await req('POST', '/api/domains', { domain: 'news.example.com' });
    ses.setIdentity('news.example.com', { dkim: 'SUCCESS', mailFrom: 'SUCCESS' });
    expect((await req('POST', `/api/domains/${domain.body.id}/verify`)).body.verified).to.equal(true);
    ({ key } = await app.createApiKey(['send']));
  });
  after(async () => providers?.close());

  it('SES gets them as message tags', async () => {
    const res = await batch();
    expect(res.body.items[0].status).to.equal(201);
    const [sent] = await eventually(async () => ses.sent, (s) => s.length === 1);
    expect(sent.body.EmailTags).to.deep.include.members([
      { Name: 'msg_id', Value: res.body.items[0].messageLogId },
      { Name: 'tag_receipt', Value: '1' },
      { Name: 'tag_eu_west', Value: '1' },
      { Name: 'meta_orderId', Value: '1042' },
    ]);
    // a key SES has no name for is left out there, and kept on the message
    expect(sent.body.EmailTags.map((t: { Name: string }) => t.Name).filter((n: string) => n.startsWith('meta_'))).to.deep.equal(['meta_orderId']);
    const detail = await eventually(() => req('GET', `/api/messages/${res.body.items[0].messageLogId}`), (r) => r.status === 200);
    expect(detail.body.metadata).to.deep.equal({ orderId: '1042', 'Größe': 'XL' });
  });

  it('Postmark gets the first tag as Tag and the metadata as Metadata', async () => {
    await switchProvider(app, 'postmark');
    const res = await batch();
    expect(res.body.items[0].status).to.equal(201);
    const [sent] = await eventually(async () => postmark.sent, (s) => s.length === 1);
    expect(sent.body.Tag).to.equal('receipt');
    expect(sent.body.Metadata).to.deep.equal({ orderId: '1042', 'Größe': 'XL', msg_id: res.body.items[0].messageLogId });
  });
});
