import net from 'node:net';
import { expect } from 'chai';
import { createId } from '@paralleldrive/cuid2';
import { createSesEmailProvider } from '../../../src/adapters/email/ses.js';
import { ProviderError } from '../../../src/ports/email-provider.js';
import { startFakeSes, type FakeSes } from '../../support/fake-ses.js';
import { emailProviderContract, type Received } from './contract.js';

const credentials = { accessKeyId: 'test-access-key', secretAccessKey: 'test-secret-key' };

function receivedBy(fake: FakeSes): Received[] {
  return fake.sent.map(({ body, messageId }) => ({
    messageId: body.EmailTags?.find((t: { Name: string }) => t.Name === 'msg_id')?.Value,
    providerMessageId: messageId,
    from: body.FromEmailAddress,
    to: body.Destination.ToAddresses[0],
    replyTo: body.ReplyToAddresses?.[0],
    subject: body.Content.Simple.Subject.Data,
    html: body.Content.Simple.Body.Html?.Data,
    text: body.Content.Simple.Body.Text?.Data,
    headers: (body.Content.Simple.Headers ?? []).map((h: { Name: string; Value: string }) => ({ name: h.Name, value: h.Value })),
    trackingDisabled:
      body.ConfigurationOverrides?.Tracking?.OpenTrackingEnabled === 'DISABLED' && body.ConfigurationOverrides?.Tracking?.ClickTrackingEnabled === 'DISABLED',
  }));
}

emailProviderContract('ses', { sendsCanFail: true, verifiesDomains: true, findsSent: false }, async () => {
  const fake = await startFakeSes();
  return {
    provider: createSesEmailProvider({ region: 'us-east-1', endpoint: fake.url, credentials }),
    received: async () => receivedBy(fake),
    failNextSend: (kind) =>
      kind === 'transient'
        ? fake.failSends('TooManyRequestsException', 'Maximum sending rate exceeded.')
        : fake.failSends('MessageRejected', 'Email address is not verified. The following identities failed the check in region US-EAST-1: app@example.com'),
    setChecks: (identity, checks) =>
      fake.setIdentity(identity, { dkim: checks.dkim ? 'SUCCESS' : 'PENDING', mailFrom: checks.mailFrom ? 'SUCCESS' : 'PENDING' }),
    cleanup: () => fake.close(),
  };
});

describe('SES v2 adapter specifics', function () {
  let fake: FakeSes;
  const provider = () => createSesEmailProvider({ region: 'eu-west-1', endpoint: fake.url, credentials, configurationSetName: 'tx-events' });
  const email = () => ({ messageId: createId(), from: 'app@example.com', to: 'r@example.org', subject: 's', text: 't', headers: [], disableProviderTracking: true });
  beforeEach(async () => {
    fake = await startFakeSes();
  });
  afterEach(() => fake.close());

  it('speaks SES v2 REST-JSON: SigV4-signed POST /v2/email/outbound-emails with the configuration set and msg_id tag', async () => {
    const out = email();
    await provider().send(out);
    const [req] = fake.requests;
    expect(req.method).to.equal('POST');
    expect(req.path).to.equal('/v2/email/outbound-emails');
    expect(req.headers.authorization).to.match(/^AWS4-HMAC-SHA256 Credential=test-access-key\/\d{8}\/eu-west-1\/ses\/aws4_request/);
    expect(req.body.ConfigurationSetName).to.equal('tx-events');
    expect(req.body.EmailTags).to.deep.equal([{ Name: 'msg_id', Value: out.messageId }]);
  });

  it('tags and metadata become SES message tags, made to SES characters, after msg_id', async () => {
    const out = { ...email(), tags: ['receipt', 'eu:west'], metadata: { orderId: '1042', 'plan.tier': 'pro plus', empty: '' } };
    await provider().send(out);
    expect(fake.sent[0].body.EmailTags).to.deep.equal([
      { Name: 'msg_id', Value: out.messageId },
      { Name: 'tag_receipt', Value: '1' },
      { Name: 'tag_eu_west', Value: '1' },
      { Name: 'meta_orderId', Value: '1042' },
      { Name: 'meta_plan_tier', Value: 'pro_plus' },
      { Name: 'meta_empty', Value: '_' },
    ]);
    for (const tag of fake.sent[0].body.EmailTags) {
      expect(tag.Name).to.match(/^[A-Za-z0-9_-]{1,256}$/);
      expect(tag.Value).to.match(/^[A-Za-z0-9_-]{1,256}$/);
    }
  });

  it('a metadata key SES cannot name (a space, a letter outside ASCII, over 256 characters with its prefix) is left out of the tags', async () => {
    const out = {
      ...email(),
      metadata: { 'order id': '1', 'Größe': '2', '注文': '3', ['k'.repeat(252)]: '4', ['k'.repeat(251)]: '5', 'a.b': 'Café au lait' },
    };
    await provider().send(out);
    expect(fake.sent[0].body.EmailTags).to.deep.equal([
      { Name: 'msg_id', Value: out.messageId },
      { Name: `meta_${'k'.repeat(251)}`, Value: '5' },
      { Name: 'meta_a_b', Value: 'Caf__au_lait' },
    ]);
  });

  it("maps the SDK's typed exceptions: the error code survives, throttling and 5xx retry, the rest are final", async () => {
    const cases: [string, boolean][] = [
      ['TooManyRequestsException', true],
      ['InternalFailure', true],
      ['MessageRejected', false],
      ['MailFromDomainNotVerifiedException', false],
      ['SendingPausedException', false],
      ['AccountSuspendedException', false],
    ];
    for (const [code, retryable] of cases) {
      fake.failSends(code, `${code} happened`);
      const err = await provider().send(email()).catch((e) => e);
      expect(err, code).to.be.instanceOf(ProviderError);
      expect(err.code, code).to.equal(code);
      expect(err.retryable, code).to.equal(retryable);
      expect(err.message, code).to.equal(`${code}: ${code} happened`);
    }
  });

  it('does not retry inside the SDK: one failed call is one request (the worker owns retries)', async () => {
    fake.failSends('TooManyRequestsException', 'slow down');
    await provider().send(email()).catch(() => undefined);
    expect(fake.requests).to.have.length(1);
  });

  it('an unreachable endpoint is a retryable error', async () => {
    const url = fake.url;
    await fake.close();
    const err = await createSesEmailProvider({ region: 'eu-west-1', endpoint: url, credentials }).send(email()).catch((e) => e);
    expect(err).to.be.instanceOf(ProviderError);
    expect(err.retryable).to.equal(true);
    fake = await startFakeSes(); // for afterEach
  });

  it('a call that hangs ends at the request timeout as a retryable error, well inside the send lease', async () => {
    // accepts the connection and never answers
    const sockets = new Set<net.Socket>();
    const blackHole = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(blackHole.address() as net.AddressInfo).port}`;
      const started = Date.now();
      const err = await createSesEmailProvider({ region: 'eu-west-1', endpoint, credentials, requestTimeoutMs: 300 }).send(email()).catch((e) => e);
      expect(err).to.be.instanceOf(ProviderError).with.property('retryable', true);
      expect(Date.now() - started).to.be.below(5_000);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => blackHole.close(resolve));
    }
  });

  it('a new domain gets the custom MAIL FROM mail.<domain>, and DNS records for the region', async () => {
    const status = await provider().createIdentity('news.example.com');
    const put = fake.requests.find((r) => r.method === 'PUT');
    expect(put?.path).to.equal('/v2/email/identities/news.example.com/mail-from');
    expect(put?.body).to.deep.equal({ MailFromDomain: 'mail.news.example.com', BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' });
    expect(status).to.include({ dkim: 'pending', spf: 'pending', mailFrom: 'pending' });
    expect(status.dnsRecords.filter((r) => r.type === 'CNAME')).to.have.length(3);
    expect(status.dnsRecords).to.deep.include({ type: 'MX', name: 'mail.news.example.com', value: '10 feedback-smtp.eu-west-1.amazonses.com' });
    expect(status.dnsRecords).to.deep.include({ type: 'TXT', name: 'mail.news.example.com', value: 'v=spf1 include:amazonses.com ~all' });
  });

  it('adding an identity that exists in SES already reads its status instead of failing', async () => {
    await provider().createIdentity('twice.example.com');
    fake.setIdentity('twice.example.com', { dkim: 'SUCCESS', mailFrom: 'SUCCESS' });
    expect(await provider().createIdentity('twice.example.com')).to.include({ dkim: 'verified', spf: 'verified', mailFrom: 'verified' });
  });

  it('FAILED checks are failed; TEMPORARY_FAILURE (a lookup problem, not a verdict) stays pending', async () => {
    await provider().createIdentity('bad.example.com');
    fake.setIdentity('bad.example.com', { dkim: 'FAILED', mailFrom: 'TEMPORARY_FAILURE' });
    expect(await provider().getIdentityStatus('bad.example.com')).to.include({ dkim: 'failed', spf: 'pending', mailFrom: 'pending' });
  });

  it('a single sender follows its own verification; an unknown identity is a final NotFoundException', async () => {
    await provider().createIdentity('solo@example.com');
    expect(await provider().getIdentityStatus('solo@example.com')).to.include({ dkim: 'pending' });
    fake.setIdentity('solo@example.com', { verifiedForSending: true });
    expect(await provider().getIdentityStatus('solo@example.com')).to.deep.equal({ dkim: 'verified', spf: 'verified', mailFrom: 'verified', dnsRecords: [] });
    const err = await provider().getIdentityStatus('nobody.example.com').catch((e) => e);
    expect(err).to.be.instanceOf(ProviderError);
    expect(err).to.include({ code: 'NotFoundException', retryable: false });
  });
});
