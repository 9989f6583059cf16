import { expect } from 'chai';
import { isSuspectedBot } from '../../../src/domain/email/bot-detection.js';
import { verifyTrackedLink } from '../../../src/domain/email/link-signature.js';
import { rewriteForTracking } from '../../../src/domain/email/tracking.js';
import { createUnsubscribeToken, readUnsubscribeToken } from '../../../src/domain/email/unsubscribe-token.js';

const opts = { baseUrl: 'https://t.example', messageId: 'msg1', secret: 'secret', unsubscribeUrls: ['https://app.example/unsub'] };

describe('tracking rewrite', () => {
  it('signs each rewritten target for this message; skips placeholders, our own host, relative links and odd-cased attributes are handled', () => {
    const out = rewriteForTracking(
      '<a HREF=" https://a.example/x ">a</a><a href="https://a.example/{{id}}">p</a><a href="https://t.example/already">o</a><a href="/rel">r</a><a href="https://app.example/unsub">u</a>',
      opts,
    );
    const hrefs = [...out.matchAll(/href="([^"]*)"/gi)].map((m) => m[1].replace(/&amp;/g, '&'));
    const first = new URL(hrefs[0]);
    expect(first.origin + first.pathname).to.equal('https://t.example/r/msg1');
    expect(verifyTrackedLink('secret', 'msg1', first.searchParams.get('u')!, first.searchParams.get('s')!)).to.equal(true);
    expect(verifyTrackedLink('secret', 'msg2', first.searchParams.get('u')!, first.searchParams.get('s')!)).to.equal(false);
    expect(hrefs.slice(1)).to.deep.equal(['https://a.example/{{id}}', 'https://t.example/already', '/rel', 'https://app.example/unsub']);
    expect(out.endsWith('<img src="https://t.example/o/msg1" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;">')).to.equal(true);
  });
});

describe('bot detection', () => {
  const now = new Date('2026-01-01T00:01:00Z');
  const ua = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/126 Safari/537.36';
  it('flags HEAD, scanners, UA-less clicks and clicks within seconds of sending; counts a person', () => {
    const sentAt = new Date('2026-01-01T00:00:00Z');
    expect(isSuspectedBot({ method: 'HEAD', userAgent: ua, sentAt, now, kind: 'open' })).to.equal(true);
    expect(isSuspectedBot({ method: 'GET', userAgent: 'Mimecast-Scanner/1.0', sentAt, now, kind: 'click' })).to.equal(true);
    expect(isSuspectedBot({ method: 'GET', userAgent: null, sentAt, now, kind: 'click' })).to.equal(true);
    expect(isSuspectedBot({ method: 'GET', userAgent: ua, sentAt: new Date(now.getTime() - 2_000), now, kind: 'click' })).to.equal(true);
    expect(isSuspectedBot({ method: 'GET', userAgent: ua, sentAt, now, kind: 'click' })).to.equal(false);
    expect(isSuspectedBot({ method: 'GET', userAgent: null, sentAt, now, kind: 'open' })).to.equal(false);
  });
});

describe('unsubscribe token', () => {
  it('round-trips and rejects anything altered or made with another secret', () => {
    const token = createUnsubscribeToken('secret', 'msg1');
    expect(readUnsubscribeToken('secret', token)).to.equal('msg1');
    expect(readUnsubscribeToken('other', token)).to.equal(null);
    expect(readUnsubscribeToken('secret', token.replace('msg1', 'msg2'))).to.equal(null);
    expect(readUnsubscribeToken('secret', 'msg1')).to.equal(null);
    expect(readUnsubscribeToken('secret', '../x.y')).to.equal(null);
  });
});
