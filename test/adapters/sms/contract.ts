import { expect } from 'chai';
import { ProviderError } from '../../../src/ports/email-provider.js';
import type { SmsProvider } from '../../../src/ports/sms-provider.js';

/** What one adapter's test gives the shared suite. */
export interface SmsHarness {
  provider: SmsProvider;
  /** what the provider received under our message id (undefined when nothing was) */
  received(messageId: string): Promise<{ to: string; body: string; originationNumber: string } | undefined>;
  /** replaces the provider's opt-out list */
  setOptedOut(numbers: string[]): Promise<void>;
  /** the next send fails this way; absent for a provider that cannot fail (the sandbox) */
  failNextSend?(kind: 'retryable' | 'permanent'): void;
  close(): Promise<void>;
}

const FROM = '+18445550100';
let counter = 0;
const messageId = () => `contract-${Date.now().toString(36)}-${++counter}`;

async function listAll(provider: SmsProvider) {
  const pages: string[][] = [];
  let token: string | undefined;
  do {
    const page = await provider.listOptedOut(token);
    pages.push(page.phoneNumbers);
    token = page.nextToken;
    if (pages.length > 50) throw new Error('paging does not end');
  } while (token);
  return pages;
}

/** The SMS provider port's contract, run against every adapter. */
export function smsProviderContract(name: string, setup: () => Promise<SmsHarness>) {
  describe(`SMS provider contract: ${name}`, function () {
    this.timeout(30_000);
    let h: SmsHarness;
    before(async () => {
      h = await setup();
    });
    after(async () => h?.close());

    it('sends to the number from the origination number, carrying our message id, and answers a provider id', async () => {
      const id = messageId();
      const result = await h.provider.send({ messageId: id, to: '+14155550100', body: 'Your code is 123456', originationNumber: FROM });
      expect(result.providerMessageId).to.be.a('string').and.not.equal('');
      expect(await h.received(id)).to.deep.equal({ to: '+14155550100', body: 'Your code is 123456', originationNumber: FROM });
    });

    it('passes any body through unchanged: UCS-2, emoji, newlines, XML and form metacharacters', async () => {
      const body = 'Grüße 😜 👨‍👩‍👧\r\nline 2 <b>&amp;</b> a=1&b=2+3 % € {x}';
      const id = messageId();
      await h.provider.send({ messageId: id, to: '+33612345678', body, originationNumber: FROM });
      expect((await h.received(id))?.body).to.equal(body);
    });

    it('gives each message its own provider id', async () => {
      const a = await h.provider.send({ messageId: messageId(), to: '+14155550100', body: 'a', originationNumber: FROM });
      const b = await h.provider.send({ messageId: messageId(), to: '+14155550100', body: 'b', originationNumber: FROM });
      expect(a.providerMessageId).to.not.equal(b.providerMessageId);
    });

    it('lists opted-out numbers in pages of at most 100 until no nextToken, each number once', async () => {
      const numbers = Array.from({ length: 250 }, (_, i) => `+1415555${String(1000 + i).padStart(4, '0')}`);
      await h.setOptedOut(numbers);
      const pages = await listAll(h.provider);
      expect(pages.length).to.equal(3);
      for (const p of pages) expect(p.length).to.be.at.most(100);
      const all = pages.flat();
      expect(all).to.have.length(250);
      expect([...all].sort()).to.deep.equal([...numbers].sort());
    });

    it('an empty opt-out list is one empty page without nextToken', async () => {
      await h.setOptedOut([]);
      expect(await h.provider.listOptedOut()).to.deep.equal({ phoneNumbers: [] });
    });

    it('maps failures: retryable for throttling and outages, permanent otherwise', async function () {
      if (!h.failNextSend) return this.skip();
      h.failNextSend('retryable');
      const retryable = await h.provider.send({ messageId: messageId(), to: '+14155550100', body: 'x', originationNumber: FROM }).catch((e) => e);
      expect(retryable).to.be.instanceOf(ProviderError).with.property('retryable', true);
      h.failNextSend('permanent');
      const permanent = await h.provider.send({ messageId: messageId(), to: '+14155550100', body: 'x', originationNumber: FROM }).catch((e) => e);
      expect(permanent).to.be.instanceOf(ProviderError).with.property('retryable', false);
    });
  });
}
