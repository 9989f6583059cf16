import { expect } from 'chai';
import { createId } from '@paralleldrive/cuid2';
import { ProviderError, type EmailProvider, type OutgoingEmail } from '../../../src/ports/email-provider.js';

/** What a provider received for one of our messages, in provider-neutral terms. */
export interface Received {
  /** our message id as the provider got it (SES tag / Postmark Metadata / sandbox key) */
  messageId: string;
  providerMessageId: string;
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  html?: string;
  text?: string;
  headers: { name: string; value: string }[];
  /** whether the provider was told to leave opens and clicks alone */
  trackingDisabled: boolean;
}

export interface EmailProviderHarness {
  provider: EmailProvider;
  /** everything the provider received, oldest first */
  received(): Promise<Received[]>;
  /** makes the provider's next send fail: transient (throttling, outage) or permanent (rejected) */
  failNextSend?: (kind: 'transient' | 'permanent') => void;
  /** sets the provider-side DNS check results of an identity created before */
  setChecks?: (identity: string, checks: { dkim: boolean; mailFrom: boolean }) => Promise<void> | void;
  cleanup(): Promise<void>;
}

const email = (over: Partial<OutgoingEmail> = {}): OutgoingEmail => ({
  messageId: createId(),
  from: 'Example App <app@example.com>',
  to: 'reader@example.org',
  replyTo: 'help@example.com',
  subject: 'Hello ünïcode',
  html: '<p>Hello</p>',
  text: 'Hello',
  headers: [],
  disableProviderTracking: true,
  ...over,
});

export interface ContractOptions {
  /** whether a send can fail at all (the sandbox never fails) */
  sendsCanFail: boolean;
  /** whether domains are verified through this adapter (Postmark's live in its Account API) */
  verifiesDomains: boolean;
  /** whether the provider can be asked for a message it accepted, by our id (SES cannot) */
  findsSent: boolean;
}

/** One contract for every email adapter (SES v2, Postmark, sandbox). */
export function emailProviderContract(name: string, options: ContractOptions, setup: () => Promise<EmailProviderHarness>) {
  describe(`email provider contract: ${name}`, function () {
    this.timeout(20_000);
    let h: EmailProviderHarness;
    beforeEach(async () => {
      h = await setup();
    });
    afterEach(async () => h?.cleanup());

    const last = async () => (await h.received()).at(-1)!;

    it('sends and returns the provider id; our message id travels with the message', async () => {
      const out = email();
      const result = await h.provider.send(out);
      expect(result.providerMessageId).to.be.a('string').and.not.equal('');
      const got = await last();
      expect(got).to.include({
        messageId: out.messageId,
        providerMessageId: result.providerMessageId,
        from: out.from,
        to: out.to,
        replyTo: out.replyTo,
        subject: out.subject,
        html: out.html,
        text: out.text,
      });
    });

    it('passes headers, List-Unsubscribe included', async () => {
      const headers = [
        { name: 'List-Unsubscribe', value: '<https://svc.example/u/tok.mac>' },
        { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
      ];
      await h.provider.send(email({ headers }));
      expect((await last()).headers).to.deep.equal(headers);
    });

    it('switches provider-side tracking off when the service tracks, and leaves it on otherwise', async () => {
      await h.provider.send(email({ disableProviderTracking: true }));
      expect((await last()).trackingDisabled).to.equal(true);
      await h.provider.send(email({ disableProviderTracking: false }));
      expect((await last()).trackingDisabled).to.equal(false);
    });

    it('sends a text-only message', async () => {
      await h.provider.send(email({ html: undefined, text: 'only text' }));
      const got = await last();
      expect(got.text).to.equal('only text');
      expect(got.html).to.equal(undefined);
    });

    if (options.findsSent) {
      it('finds a message it accepted by our id, and nothing for an id it never got', async () => {
        const out = email();
        const other = email();
        expect(await h.provider.findSent!(out.messageId)).to.equal(null);
        const { providerMessageId } = await h.provider.send(out);
        await h.provider.send(other);
        expect(await h.provider.findSent!(out.messageId)).to.deep.equal({ providerMessageId });
        expect(await h.provider.findSent!(createId())).to.equal(null);
      });
    } else {
      it('has no lookup of sent messages (the send worker then relies on the provider\'s events)', () => {
        expect(h.provider.findSent).to.equal(undefined);
      });
    }

    it('registers a domain and a single sender, reporting each check', async () => {
      const domain = `d${Date.now()}.example.com`;
      const status = await h.provider.createIdentity(domain);
      for (const check of [status.dkim, status.spf, status.mailFrom]) expect(check).to.be.oneOf(['pending', 'verified', 'failed']);
      expect(status.dnsRecords).to.be.an('array');
      const again = await h.provider.getIdentityStatus(domain);
      expect(again).to.deep.equal(status);
      const sender = await h.provider.createIdentity(`solo@${domain}`);
      expect(sender.dkim).to.be.oneOf(['pending', 'verified']);
    });

    if (options.sendsCanFail) {
      describe('failures', function () {
        it('a transient failure is a retryable ProviderError', async () => {
          h.failNextSend!('transient');
          const err = await h.provider.send(email()).catch((e) => e);
          expect(err).to.be.instanceOf(ProviderError);
          expect(err.retryable).to.equal(true);
          // and the next send goes through
          expect((await h.provider.send(email())).providerMessageId).to.be.a('string');
        });

        it('a permanent failure is a final ProviderError carrying the provider detail', async () => {
          h.failNextSend!('permanent');
          const err = await h.provider.send(email()).catch((e) => e);
          expect(err).to.be.instanceOf(ProviderError);
          expect(err.retryable).to.equal(false);
          expect(err.message).to.match(/rejected|inactive/i);
        });
      });
    }

    if (options.verifiesDomains) {
      describe('identity verification', function () {
        it('a domain is verified only when DKIM, SPF (through MAIL FROM) and MAIL FROM all succeed', async () => {
          const domain = `v${Date.now()}.example.net`;
          await h.provider.createIdentity(domain);
          if (h.setChecks) {
            await h.setChecks(domain, { dkim: true, mailFrom: false });
            const half = await h.provider.getIdentityStatus(domain);
            expect(half).to.include({ dkim: 'verified', spf: 'pending', mailFrom: 'pending' });
            await h.setChecks(domain, { dkim: false, mailFrom: true });
            expect(await h.provider.getIdentityStatus(domain)).to.include({ dkim: 'pending', spf: 'verified', mailFrom: 'verified' });
            await h.setChecks(domain, { dkim: true, mailFrom: true });
          }
          const status = await h.provider.getIdentityStatus(domain);
          expect(status).to.include({ dkim: 'verified', spf: 'verified', mailFrom: 'verified' });
          expect(status.dnsRecords.length).to.be.greaterThan(0);
        });
      });
    }
  });
}
