import { expect } from 'chai';
import { createId } from '@paralleldrive/cuid2';
import { createPostmarkEmailProvider } from '../../../src/adapters/email/postmark.js';
import { ProviderError } from '../../../src/ports/email-provider.js';
import { startFakePostmark, type FakePostmark } from '../../support/fake-postmark.js';
import { emailProviderContract, type Received } from './contract.js';

function receivedBy(fake: FakePostmark): Received[] {
  return fake.sent.map(({ body, messageId }) => ({
    messageId: body.Metadata?.msg_id,
    providerMessageId: messageId,
    from: body.From,
    to: body.To,
    replyTo: body.ReplyTo,
    subject: body.Subject,
    html: body.HtmlBody,
    text: body.TextBody,
    headers: (body.Headers ?? []).map((h: { Name: string; Value: string }) => ({ name: h.Name, value: h.Value })),
    trackingDisabled: body.TrackOpens === false && body.TrackLinks === 'None',
  }));
}

emailProviderContract('postmark', { sendsCanFail: true, verifiesDomains: false, findsSent: true }, async () => {
  const fake = await startFakePostmark();
  return {
    provider: createPostmarkEmailProvider({ serverToken: fake.token, apiUrl: fake.url }),
    received: async () => receivedBy(fake),
    failNextSend: (kind) =>
      kind === 'transient'
        ? fake.failSends(429, 0, 'Rate limit exceeded')
        : fake.failSends(422, 406, 'You tried to send to recipient(s) that have been marked as inactive.'),
    cleanup: () => fake.close(),
  };
});

describe('Postmark adapter specifics', function () {
  let fake: FakePostmark;
  const email = () => ({ messageId: createId(), from: 'app@example.com', to: 'r@example.org', subject: 's', text: 't', headers: [], disableProviderTracking: true });
  beforeEach(async () => {
    fake = await startFakePostmark();
  });
  afterEach(() => fake.close());

  it('POST /email with the server token on the outbound stream', async () => {
    await createPostmarkEmailProvider({ serverToken: fake.token, apiUrl: fake.url }).send(email());
    const [req] = fake.requests;
    expect(req).to.include({ method: 'POST', path: '/email' });
    expect(req.headers['x-postmark-server-token']).to.equal(fake.token);
    expect(req.body.MessageStream).to.equal('outbound');
  });

  it('sends the first tag as Tag and the metadata as Metadata, with our msg_id beside it', async () => {
    const out = { ...email(), tags: ['receipt', 'eu:west'], metadata: { orderId: '1042', plan: 'pro' } };
    await createPostmarkEmailProvider({ serverToken: fake.token, apiUrl: fake.url }).send(out);
    expect(fake.requests[0].body.Tag).to.equal('receipt');
    expect(fake.requests[0].body.Metadata).to.deep.equal({ orderId: '1042', plan: 'pro', msg_id: out.messageId });
  });

  it('passes metadata keys of any text as they are', async () => {
    const out = { ...email(), metadata: { 'order id': '1', 'Größe': 'XL', '注文': 'é ü' } };
    await createPostmarkEmailProvider({ serverToken: fake.token, apiUrl: fake.url }).send(out);
    expect(fake.requests[0].body.Metadata).to.deep.equal({ 'order id': '1', 'Größe': 'XL', '注文': 'é ü', msg_id: out.messageId });
  });

  it('sends no Tag when the message has none', async () => {
    await createPostmarkEmailProvider({ serverToken: fake.token, apiUrl: fake.url }).send(email());
    expect(fake.requests[0].body).to.not.have.property('Tag');
  });

  it('maps statuses: 422 and 401 are final with the ErrorCode; 429, 500 and 503 retry', async () => {
    const cases: [number, number, boolean][] = [
      [422, 300, false],
      [422, 406, false],
      [429, 0, true],
      [500, 0, true],
      [503, 0, true],
    ];
    const provider = createPostmarkEmailProvider({ serverToken: fake.token, apiUrl: fake.url });
    for (const [status, code, retryable] of cases) {
      fake.failSends(status, code, `failure ${status}/${code}`);
      const err = await provider.send(email()).catch((e) => e);
      expect(err, `${status}`).to.be.instanceOf(ProviderError);
      expect(err.retryable, `${status}`).to.equal(retryable);
      expect(err.message, `${status}`).to.contain(`failure ${status}/${code}`);
      if (code) expect(err.code).to.equal(String(code));
    }
    const badToken = await createPostmarkEmailProvider({ serverToken: 'wrong', apiUrl: fake.url }).send(email()).catch((e) => e);
    expect(badToken).to.include({ retryable: false, code: '10' });
  });

  it('an unreachable API is a retryable error', async () => {
    const url = fake.url;
    await fake.close();
    const err = await createPostmarkEmailProvider({ serverToken: 't', apiUrl: url }).send(email()).catch((e) => e);
    expect(err).to.be.instanceOf(ProviderError);
    expect(err.retryable).to.equal(true);
    fake = await startFakePostmark();
  });
});
