import { expect } from 'chai';
import { isSuspectedBot } from '../../../src/domain/email/bot-detection.js';
import { openCounts, signOpenPixel, verifyTrackedLink } from '../../../src/domain/email/link-signature.js';
import { MAX_TRACKED_LINKS, MAX_TRACKED_TARGET, redirectTarget, rewriteForTracking, trackedLink } from '../../../src/domain/email/tracking.js';
import { MAX_BODY } from '../../../src/domain/email/render.js';
import { AppError } from '../../../src/domain/errors.js';
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
    expect(out.endsWith(`<img src="https://t.example/o/msg1?s=${signOpenPixel('secret', 'msg1')}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;">`)).to.equal(true);
  });
});

describe('redirect targets', () => {
  it("is the link's URL serialisation: ASCII, percent-encoded UTF-8, punycode hosts", () => {
    expect(redirectTarget('https://example.com/😀')).to.equal('https://example.com/%F0%9F%98%80');
    expect(redirectTarget('https://пример.рф/')).to.equal('https://xn--e1afmkfd.xn--p1ai/');
    expect(redirectTarget('https://example.com/?city=Łódź')).to.equal('https://example.com/?city=%C5%81%C3%B3d%C5%BA');
    expect(redirectTarget('HTTP://Example.com/José#à')).to.equal('http://example.com/Jos%C3%A9#%C3%A0');
    expect(redirectTarget('https://shop.example.com/item?id=1&ref=mail')).to.equal('https://shop.example.com/item?id=1&ref=mail');
  });

  it('is null for what no redirect can name: control characters, not http(s), no URL, over the length /r/ takes', () => {
    for (const target of ['https://example.com/a\r\nb', 'https://example.com/\u0000', 'https://example.com/\u0085', 'https://example.com/\t', 'javascript:alert(1)', 'mailto:a@b.c', 'https://exa mple.com/', 'https://', `https://example.com/${'a'.repeat(MAX_TRACKED_TARGET)}`]) {
      expect(redirectTarget(target), JSON.stringify(target)).to.equal(null);
    }
  });

  it('the rewrite leaves alone the links it could not redirect', () => {
    const html = '<a href="https://example.com/a&#13;&#10;b">x</a><a href="https://exa mple.com/">y</a>';
    expect(rewriteForTracking(html, opts).startsWith(`${html}<img`)).to.equal(true);
  });
});

describe('tracking rewrite: bounds', () => {
  const refusal = (html: string) => {
    try {
      rewriteForTracking(html, opts);
    } catch (err) {
      expect(err).to.be.instanceOf(AppError);
      return `${(err as AppError).status} ${(err as AppError).message}`;
    }
    return null;
  };

  it(`tracks ${MAX_TRACKED_LINKS} links; one more is a 400 on html, however many follow`, () => {
    const link = '<a href=https://a.example>x</a>';
    const untracked = '<a href="mailto:a@b.c">m</a><a href=https://b.example data-no-track>n</a>';
    expect(refusal(link.repeat(MAX_TRACKED_LINKS) + untracked.repeat(100))).to.equal(null);
    expect(refusal(link.repeat(MAX_TRACKED_LINKS + 1))).to.equal('400 html: at most 1,000 links are tracked per message (mark the others data-no-track)');
    expect(refusal(link.repeat(150_000))).to.match(/^400 html: at most 1,000 links/);
  });

  it(`the tracked html stays within ${MAX_BODY} characters`, () => {
    const long = `<a href="https://a.example/${'é'.repeat(1000)}">x</a>`;
    expect(refusal(long.repeat(100))).to.equal(null);
    expect(refusal(long.repeat(1000))).to.equal('400 html: longer than 5,000,000 characters once its links are tracked');
    expect(refusal('x'.repeat(MAX_BODY))).to.equal('400 html: longer than 5,000,000 characters once its links are tracked');
  });
});

describe('open pixels', () => {
  it("an open counts with its message's own signature; unsigned, only for a message whose html has the unsigned pixel of before", () => {
    const signed = signOpenPixel('secret', 'msg1');
    expect(openCounts('secret', 'msg1', signed, null)).to.equal(true);
    expect(openCounts('secret', 'msg2', signed, null)).to.equal(false);
    expect(openCounts('other-secret', 'msg1', signed, null)).to.equal(false);
    expect(openCounts('secret', 'msg1', 'forged', '<img src="https://t.example/o/msg1">')).to.equal(false);
    expect(openCounts('secret', 'msg1', undefined, '<img src="https://t.example/o/msg1">')).to.equal(true);
    expect(openCounts('secret', 'msg1', undefined, `<img src="https://t.example/o/msg1?s=${signed}">`)).to.equal(false);
    expect(openCounts('secret', 'msg1', undefined, null)).to.equal(false);
  });
});

describe('tracking rewrite: the markup around the links', () => {
  const tracked = (target: string) => trackedLink(opts, target).replace(/&/g, '&amp;');
  const pixel = `<img src="https://t.example/o/msg1?s=${signOpenPixel('secret', 'msg1')}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;">`;

  it('changes only the tracked href attributes and adds the pixel: every other byte stays as written', () => {
    const html = [
      '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"><html><head><style>a{color:red}</style></head><BODY class=x>',
      '<!--[if mso]><a href="https://mso.example/x">outlook only</a><![endif]-->',
      "<a class='btn' href='https://a.example/?q=1&amp;r=2' target=_blank>one</a>",
      '<a href=https://b.example/path title="B &amp; C">two</a>',
      '<a name="top">no href</a><a href="https://c.example/" HREF="https://ignored.example/">first href counts</a>',
      '<script>document.write(\'<a href="https://script.example/">\')</script>',
      '<p>Caf&eacute; &amp; more</p></BODY></html><!-- </body> -->',
    ].join('\n');
    expect(rewriteForTracking(html, opts)).to.equal(
      [
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"><html><head><style>a{color:red}</style></head><BODY class=x>',
        '<!--[if mso]><a href="https://mso.example/x">outlook only</a><![endif]-->',
        `<a class='btn' href="${tracked('https://a.example/?q=1&r=2')}" target=_blank>one</a>`,
        `<a href="${tracked('https://b.example/path')}" title="B &amp; C">two</a>`,
        `<a name="top">no href</a><a href="${tracked('https://c.example/')}" HREF="https://ignored.example/">first href counts</a>`,
        '<script>document.write(\'<a href="https://script.example/">\')</script>',
        `<p>Caf&eacute; &amp; more</p>${pixel}</BODY></html><!-- </body> -->`,
      ].join('\n'),
    );
  });

  it('removes data-no-track with the space before it, leaving that link alone; a fragment gets the pixel at its end', () => {
    expect(rewriteForTracking('<p><a href="https://a.example/" data-no-track>a</a> <a data-no-track="" href="https://b.example/" id=b>b</a></p>', opts)).to.equal(
      `<p><a href="https://a.example/">a</a> <a href="https://b.example/" id=b>b</a></p>${pixel}`,
    );
    expect(rewriteForTracking('', opts)).to.equal(pixel);
    expect(rewriteForTracking('<a href="https://a.example/"', opts)).to.equal(`<a href="https://a.example/"${pixel}`);
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
