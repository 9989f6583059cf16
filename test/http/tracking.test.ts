import { expect } from 'chai';
import { parseHTML } from 'linkedom';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';
import { emailQueued } from '../support/messages-projection.js';
import { createId } from '../../src/cuid.js';
import { execute } from '../../src/commands/execute.js';
import { messageStream } from '../../src/domain/messages/events.js';
import { messageDecider } from '../../src/domain/messages/message.js';
import { trackedLink } from '../../src/domain/email/tracking.js';

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const SCANNER = 'Mozilla/5.0 (compatible; Barracuda Sentinel (EE))';

describe('service tracking: rewritten links, /r/ redirects, /o/ pixel', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;
  let from: string;

  const html = `<html><head><title>t</title></head><body>
    <a href="https://shop.example.com/item?id=1&amp;ref=mail">item</a>
    <a href="http://plain.example.com/">plain</a>
    <a href="mailto:help@example.com">mail us</a>
    <a href="tel:+14155550100">call</a>
    <a href="#top">top</a>
    <a href="https://private.example.com/account" data-no-track>account</a>
    <a href="https://example.com/prefs">unsubscribe</a>
  </body></html>`;

  const sendTracked = async (body: Record<string, unknown> = {}) => {
    const res = await app.request('POST', '/api/send/transactional', {
      apiKey: key,
      body: { to: 'reader@example.org', fromEmail: from, subject: 'Tracked', html, text: 'plain', unsubscribeUrl: 'https://example.com/prefs', ...body },
    });
    expect(res.status).to.equal(201);
    const id: string = res.body.messageLogId;
    const row = await eventually(() => app.infra.db('sandbox_emails').where({ message_id: id }).first(), (r) => Boolean(r));
    return { id, row };
  };
  /** the open pixel's URL in a message's html, as the mail client reads it */
  const pixelOf = (markup: string) => markup.match(/<img src="([^"]*\/o\/[^"]*)"/)![1].replace(/&amp;/g, '&');
  const hrefs = (markup: string) => {
    const { document } = parseHTML(markup);
    return (Array.from(document.querySelectorAll('a')) as Element[]).map((a) => a.getAttribute('href')!);
  };
  const message = (id: string) => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }).then((r) => r.body);
  const get = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init });

  before(async () => {
    app = await startTestApp();
    ({ key, from } = await readyToSend(app));
  });
  after(async () => app?.close());

  it('rewrites every http(s) link through /r/<messageId>; mailto, tel, #, data-no-track and the unsubscribe link stay; the pixel goes before </body>', async () => {
    const { id, row } = await sendTracked();
    const links = hrefs(row.html);
    const prefix = `${app.baseUrl}/r/${id}?`;
    expect(links[0].startsWith(prefix)).to.equal(true);
    expect(new URL(links[0]).searchParams.get('u')).to.equal('https://shop.example.com/item?id=1&ref=mail');
    expect(new URL(links[1]).searchParams.get('u')).to.equal('http://plain.example.com/');
    expect(links.slice(2)).to.deep.equal(['mailto:help@example.com', 'tel:+14155550100', '#top', 'https://private.example.com/account', 'https://example.com/prefs']);
    expect(row.html).to.not.contain('data-no-track');
    expect(row.html).to.match(new RegExp(`<img src="${app.baseUrl}/o/${id}\\?s=[\\w-]+" width="1" height="1" alt=""[^>]*>\\s*</body>`));
    expect(row.text).to.equal('plain'); // the text part is not rewritten
    expect(row.provider_tracking).to.equal(false);
  });

  it('an HTML fragment gets the pixel at its end and no document wrapper', async () => {
    const { id, row } = await sendTracked({ html: '<p>Hi <a href="https://example.org/a">a</a></p>' });
    expect(row.html).to.match(new RegExp(`^<p>Hi <a href="${app.baseUrl}/r/${id}\\?[^"]+">a</a></p><img src="${app.baseUrl}/o/${id}\\?s=[\\w-]+"[^>]*>$`));
  });

  it('tracking "none" and "provider" leave the HTML alone', async () => {
    for (const tracking of ['none', 'provider']) {
      await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { tracking } });
      const { row } = await sendTracked();
      expect(row.html).to.equal(html);
      expect(row.provider_tracking).to.equal(tracking === 'provider');
    }
    await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { tracking: 'service' } });
  });

  it('GET /r/ with a good signature redirects and records a Clicked event; a person clicking later is counted', async () => {
    const { id, row } = await sendTracked();
    const link = hrefs(row.html)[0];
    const accepted = await eventually(() => app.infra.eventStore.readStream(`message-${id}`), (es) => es.some((e) => e.type === 'ProviderAccepted'));
    // Clicks within seconds of sending are scanners: wait until a person could have clicked.
    const sentAt = accepted.find((e) => e.type === 'ProviderAccepted')!.recordedAt.getTime();
    await new Promise((r) => setTimeout(r, Math.max(0, sentAt + 5_100 - Date.now())));
    const res = await get(link, { headers: { 'user-agent': BROWSER } });
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal('https://shop.example.com/item?id=1&ref=mail');
    const m = await eventually(() => message(id), (b) => b.events.some((e: any) => e.type === 'clicked'));
    expect(m.clicks).to.equal(1);
    const click = m.events.find((e: any) => e.type === 'clicked');
    expect(click.data).to.include({ url: 'https://shop.example.com/item?id=1&ref=mail', suspectedBot: false, userAgent: BROWSER, source: 'service' });
  });

  it('a click right after sending, a scanner user agent or a HEAD request still redirects but is flagged as a bot and not counted', async () => {
    const { id, row } = await sendTracked();
    const link = hrefs(row.html)[0];
    await eventually(() => message(id), (b) => b?.status === 'sent');
    const fast = await get(link, { headers: { 'user-agent': BROWSER } });
    const scanner = await get(link, { headers: { 'user-agent': SCANNER } });
    const head = await get(link, { method: 'HEAD', headers: { 'user-agent': BROWSER } });
    for (const res of [fast, scanner, head]) expect(res.status).to.equal(302);
    const m = await eventually(() => message(id), (b) => b.events.filter((e: any) => e.type === 'clicked').length === 3);
    expect(m.events.filter((e: any) => e.type === 'clicked').map((e: any) => e.data.suspectedBot)).to.deep.equal([true, true, true]);
    expect(m.clicks).to.equal(0);
  });

  it('a bad, missing or transplanted signature is 404 and never redirects', async () => {
    const { id, row } = await sendTracked();
    const link = new URL(hrefs(row.html)[0]);
    const other = await sendTracked();
    const tampered = new URL(link);
    tampered.searchParams.set('u', 'https://evil.example/phish');
    const noSig = new URL(link);
    noSig.searchParams.delete('s');
    const badSig = new URL(link);
    badSig.searchParams.set('s', 'A'.repeat(43));
    const transplanted = new URL(link.toString().replace(`/r/${id}`, `/r/${other.id}`));
    for (const url of [tampered, noSig, badSig, transplanted]) {
      const res = await get(url.toString(), { headers: { 'user-agent': BROWSER } });
      expect(res.status, url.toString()).to.equal(404);
      expect(res.headers.get('location')).to.equal(null);
      expect(await res.json()).to.deep.equal({ message: 'Not Found', error: 'Not Found', statusCode: 404 });
    }
    expect((await message(id)).events.filter((e: any) => e.type === 'clicked')).to.have.length(0);
  });

  describe('links outside Latin-1 and with control characters', () => {
    const JSON_404 = { message: 'Not Found', error: 'Not Found', statusCode: 404 };
    const clicksOf = async (id: string) => (await app.infra.eventStore.readStream(messageStream(id))).filter((e) => e.type === 'Clicked');

    // `&#0;` is U+FFFD to every HTML parser (a browser following the original link goes there too)
    it("redirects to the link's own serialisation: paths and queries percent-encoded (UTF-8), hosts in punycode", async () => {
      const { id, row } = await sendTracked({
        html: '<a href="https://example.com/😀">e</a><a href="https://пример.рф/">i</a><a href="https://example.com/?city={{city}}">t</a><a href="https://example.com/José">l</a><a href="https://example.com/a&#0;b">n</a>',
        variables: { city: 'Łódź' },
      });
      const links = hrefs(row.html);
      expect(links.map((l) => new URL(l).searchParams.get('u'))).to.deep.equal(['https://example.com/😀', 'https://пример.рф/', 'https://example.com/?city=Łódź', 'https://example.com/José', 'https://example.com/a\uFFFDb']);
      const locations = [];
      for (const link of links) {
        for (const method of ['GET', 'HEAD']) {
          const res = await get(link, { method, headers: { 'user-agent': BROWSER } });
          expect(res.status, `${method} ${link}`).to.equal(302);
          if (method === 'GET') locations.push(res.headers.get('location'));
        }
      }
      expect(locations).to.deep.equal(['https://example.com/%F0%9F%98%80', 'https://xn--e1afmkfd.xn--p1ai/', 'https://example.com/?city=%C5%81%C3%B3d%C5%BA', 'https://example.com/Jos%C3%A9', 'https://example.com/a%EF%BF%BDb']);
      await eventually(() => clicksOf(id), (clicks) => clicks.length === 10);
    });

    it('a link with a control character (CR and LF as entities, a raw BEL) is sent as written, not wrapped', async () => {
      const html = '<a href="https://example.com/a&#13;&#10;b">crlf</a><a href="https://example.com/\u0007">bell</a>';
      const { row } = await sendTracked({ html });
      expect(row.html.startsWith(html)).to.equal(true);
      expect(row.html).to.not.contain('/r/');
    });

    it('a signed link whose target cannot be redirected (queued before such links were left alone) is 404 in the JSON shape and records no click', async () => {
      const { id } = await sendTracked();
      const linkSecret = (await app.infra.db('service_secrets').where({ name: 'links' }).first('value')).value as string;
      for (const target of ['https://example.com/a\r\nb', 'https://example.com/a\u0007b', 'https://exa mple.com/']) {
        for (const method of ['GET', 'HEAD']) {
          const res = await get(trackedLink({ baseUrl: app.baseUrl, messageId: id, secret: linkSecret }, target), { method, headers: { 'user-agent': BROWSER } });
          expect(res.status, JSON.stringify(target)).to.equal(404);
          expect(res.headers.get('location')).to.equal(null);
          if (method === 'GET') expect(await res.json()).to.deep.equal(JSON_404);
        }
      }
      await new Promise((r) => setTimeout(r, 300));
      expect(await clicksOf(id)).to.deep.equal([]);
    });
  });

  describe('bounded: at most 1,000 tracked links, and the tracked html within the html cap', () => {
    const send = (html: string) => app.request('POST', '/api/send/transactional', { apiKey: key, body: { to: 'reader@example.org', fromEmail: from, subject: 'Many links', html, text: 'plain' } });

    it('188,000 links (4.9 MB) are refused at once, naming the field and the limit, and nothing is queued', async () => {
      const html = '<a href=https://a.co>x</a>'.repeat(188_000);
      expect(html.length).to.be.below(5_000_000);
      const before = await app.infra.db('sandbox_emails').count({ n: '*' }).first();
      const started = Date.now();
      const res = await send(html);
      const took = Date.now() - started;
      expect(res.status, res.text.slice(0, 200)).to.equal(400);
      expect(res.body).to.deep.equal({ message: 'html: at most 1,000 links are tracked per message (mark the others data-no-track)', error: 'Bad Request', statusCode: 400 });
      expect(took, `${took} ms`).to.be.below(3_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(await app.infra.db('sandbox_emails').count({ n: '*' }).first()).to.deep.equal(before);
    });

    it('1,000 links are tracked; links marked data-no-track do not count', async () => {
      const html = '<a href=https://a.co>x</a>'.repeat(1_000) + '<a href=https://b.co data-no-track>y</a>'.repeat(50);
      const res = await send(html);
      expect(res.status, res.text.slice(0, 200)).to.equal(201);
      const row = await eventually(() => app.infra.db('sandbox_emails').where({ message_id: res.body.messageLogId }).first(), (r) => Boolean(r));
      const links = hrefs(row.html);
      expect(links.filter((l) => l.startsWith(`${app.baseUrl}/r/`))).to.have.length(1_000);
      expect(links.filter((l) => l === 'https://b.co')).to.have.length(50);
    });

    it('links that would take the html past 5,000,000 characters once tracked are refused', async () => {
      // 1,000 links of 1,000 × `é`: 1 MB as written, 6 MB once each target is percent-encoded in its /r/ link
      const res = await send(`<a href="https://example.com/${'é'.repeat(1_000)}">x</a>`.repeat(1_000));
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal('html: longer than 5,000,000 characters once its links are tracked');
    });
  });

  it('GET /o/ answers a 1×1 GIF, uncached, and records a counted open; HEAD and scanners are flagged, not counted', async () => {
    const { id, row } = await sendTracked();
    const pixel = pixelOf(row.html);
    const res = await get(pixel, { headers: { 'user-agent': BROWSER } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/gif');
    expect(res.headers.get('cache-control')).to.contain('no-store');
    const gif = Buffer.from(await res.arrayBuffer());
    expect(gif.subarray(0, 6).toString('ascii')).to.equal('GIF89a');
    expect([gif.readUInt16LE(6), gif.readUInt16LE(8)]).to.deep.equal([1, 1]);
    expect((await get(pixel, { method: 'HEAD', headers: { 'user-agent': BROWSER } })).status).to.equal(200);
    expect((await get(pixel, { headers: { 'user-agent': SCANNER } })).status).to.equal(200);
    const m = await eventually(() => message(id), (b) => b.events.filter((e: any) => e.type === 'opened').length === 3);
    expect(m.events.filter((e: any) => e.type === 'opened').map((e: any) => e.data.suspectedBot)).to.deep.equal([false, true, true]);
    expect(m.opens).to.equal(1);
    const aggregate = await app.request('GET', '/api/messages/aggregate', { token: app.adminToken });
    expect(aggregate.body.opens.total).to.be.at.least(1);
  });

  it("only the pixel signed for its message counts: unsigned, forged or another message's answer the same GIF and record nothing", async () => {
    const { id } = await sendTracked();
    const { row: other } = await sendTracked();
    const forged = [`${app.baseUrl}/o/${id}`, `${app.baseUrl}/o/${id}?s=forged`, `${app.baseUrl}/o/${id}?${new URL(pixelOf(other.html)).searchParams}`];
    for (const url of forged) {
      const res = await get(url, { headers: { 'user-agent': BROWSER } });
      expect(res.status, url).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('image/gif');
    }
    await new Promise((r) => setTimeout(r, 300));
    expect((await app.infra.eventStore.readStream(`message-${id}`)).filter((e) => e.type === 'Opened')).to.deep.equal([]);
  });

  it('a message queued before pixels were signed counts its unsigned pixel, as its html has it', async () => {
    const { accountId } = (await app.request('GET', '/api/auth/session', { token: app.adminToken })).body;
    const id = createId();
    // what the rewrite added before pixels were signed: the pixel's URL ends at the message's id
    const { data } = emailQueued(id, { accountId, apiKeyId: null, queuedAt: new Date().toISOString(), html: `<p>old</p><img src="${app.baseUrl}/o/${id}" width="1" height="1" alt="">` });
    await execute(messageDecider, { kind: 'queueEmail', data }, { eventStore: app.infra.eventStore, streamId: messageStream(id), metadata: { actor: 'system:test' } });
    expect((await get(`${app.baseUrl}/o/${id}`, { headers: { 'user-agent': BROWSER } })).status).to.equal(200);
    await eventually(() => app.infra.eventStore.readStream(messageStream(id)), (events) => events.some((e) => e.type === 'Opened'));
  });

  it('the pixel for an unknown message is still a GIF and records nothing', async () => {
    const res = await get(`${app.baseUrl}/o/nosuchmessage0000000000000`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/gif');
    expect(await app.infra.eventStore.readStream('message-nosuchmessage0000000000000')).to.deep.equal([]);
  });
});
