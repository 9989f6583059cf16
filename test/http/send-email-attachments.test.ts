import { expect } from 'chai';
import type { TestApp } from '../support/app.js';
import { startAppWithFakeProviders, type AppWithFakeProviders } from '../support/app-with-fake-providers.js';
import { eventually, readyToSend, switchProvider } from '../support/email-setup.js';
import type { FakePostmark } from '../support/fake-postmark.js';
import type { FakeSes } from '../support/fake-ses.js';

const PDF = Buffer.from('%PDF-1.4 a small invoice\n');
const PNG = Buffer.from('\x89PNG\r\n\x1a\n not really an image', 'latin1');
const b64 = (b: Buffer) => b.toString('base64');
const invoice = { filename: 'invoice.pdf', content: b64(PDF), contentType: 'application/pdf' };
const logo = { filename: 'logo.png', content: b64(PNG), contentId: 'logo@courier' };

describe('POST /api/send/transactional with attachments', function () {
  this.timeout(120_000);
  let providers: AppWithFakeProviders | undefined;
  let app: TestApp;
  let ses: FakeSes;
  let pm: FakePostmark;
  let key: string;
  let from: string;
  const send = (body: Record<string, unknown>) =>
    app.request('POST', '/api/send/transactional', {
      apiKey: key,
      body: { to: 'reader@example.org', fromEmail: from, subject: 'Your invoice', html: '<p>Hi <img src="cid:logo@courier"></p>', text: 'Hi', ...body },
    });
  const message = (id: string) => app.request('GET', `/api/messages/${id}`, { token: app.adminToken }).then((r) => r.body);
  const settled = (id: string) => eventually(() => message(id), (m) => m?.status === 'sent' || m?.status === 'failed', 30_000);
  const useProvider = (kind: 'ses' | 'postmark' | 'sandbox') => switchProvider(app, kind, { ses });

  before(async () => {
    providers = await startAppWithFakeProviders();
    ({ app, ses, pm } = providers);
    ({ key, from } = await readyToSend(app));
  });
  after(async () => providers?.close());

  describe('limits: 400 naming the field and the limit', () => {
    const refused = async (attachments: unknown[], message: RegExp) => {
      const res = await send({ attachments });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
      expect(res.body.message).to.match(message);
    };

    it('invalid base64', async () => {
      await refused([{ filename: 'a.txt', content: 'not base64!' }], /^attachments\.0\.content: must be valid base64/);
      await refused([invoice, { filename: 'a.txt', content: 'YWJ' }], /^attachments\.1\.content: must be valid base64/);
      await refused([{ filename: 'a.txt', content: 'YW\nJj' }], /^attachments\.0\.content: must be valid base64/);
    });

    it('over 7 MB decoded in all, alone or together', async () => {
      const over = Buffer.alloc(7 * 1024 * 1024 + 1, 1);
      await refused([{ filename: 'big.bin', content: b64(over) }], /^attachments: at most 7340032 bytes \(7 MB\) decoded in all$/);
      const half = b64(Buffer.alloc(3.5 * 1024 * 1024 + 3, 1));
      await refused([{ filename: 'a.bin', content: half }, { filename: 'b.bin', content: half }], /^attachments: at most 7340032 bytes/);
    });

    it('an 11th attachment', async () => {
      const eleven = Array.from({ length: 11 }, (_, i) => ({ filename: `f${i}.txt`, content: 'YWJj' }));
      await refused(eleven, /^attachments: at most 10 attachments per message$/);
    });

    it('an executable type, by extension and by content type', async () => {
      for (const filename of ['setup.exe', 'run.BAT', 'x.cmd', 'a.com', 'app.js', 'x.vbs', 's.scr', 'i.msi', 'lib.jar', 'p.ps1', 'trailing.exe.', 'x.scr;', 'x.exe; ', 'x.exe;.txt', 'addin.xll', 'db.adp', 'x.diagcfg']) {
        await refused([{ filename, content: 'YWJj' }], /^attachments\.0\.filename: \.\w+ files are refused as attachments/);
      }
      await refused([invoice, { filename: 'notes.txt', content: 'YWJj', contentType: 'application/x-msdownload' }], /^attachments\.1\.contentType: application\/x-msdownload is refused/);
      await refused([{ filename: 'book.xlsx', content: 'YWJj', contentType: 'application/vnd.ms-excel.addin.macroEnabled.12' }], /^attachments\.0\.contentType: application\/vnd\.ms-excel\.addin\.macroenabled\.12 is refused/);
      await refused([{ filename: 'notes.txt', content: 'YWJj', contentType: 'text/x-shellscript' }], /^attachments\.0\.contentType: text\/x-shellscript is refused/);
    });

    it('a content id outside printable ASCII, with a space, angle bracket or quote', async () => {
      for (const contentId of ['café', 'logo\u200b', 'a b', 'a<b', 'a>b', 'a"b', 'a\tb', 'a\u007fb']) {
        await refused([{ ...logo, contentId }], /^attachments\.0\.contentId: must be printable ASCII without spaces, angle brackets or quotes$/);
      }
    });

    it('a filename with a character Windows does not allow in names, a control character or an invisible format character', async () => {
      const rule = /^attachments\.0\.filename: must be a file name without characters Windows refuses in one \(< > : " \/ \\ \| \? \*\), control characters or invisible formatting characters$/;
      for (const filename of ['x.exe:', 'x.exe:Zone.Identifier', 'x.exe::$DATA', 'x.scr;', 'x.exe*', 'x.bat?', 'x.exe"', 'x.exe<', 'x.exe|', 'x.exe\u200b', 'x.exe\u202e', 'x.e\u00adxe', 'x.exe\u0085', 'x.exe\u2028', 'report:2024.pdf', '../a.txt', 'a\\b.txt']) {
        // `;` is allowed in a Windows name, but a lax MIME parser ends the name there: x.scr; is refused by its extension
        await refused([{ filename, content: 'YWJj' }], filename === 'x.scr;' ? /^attachments\.0\.filename: \.scr files are refused as attachments/ : rule);
      }
    });

    it('malformed fields and a repeated content id', async () => {
      await refused([{ filename: 'a.txt' }], /^attachments\.0\.content: /);
      await refused([{ filename: 'a.txt', content: 'YWJj', contentType: 'nonsense' }], /^attachments\.0\.contentType: must be a MIME type/);
      await refused([{ filename: 'a.txt', content: 'YWJj', extra: 1 }], /^attachments\.0/);
      await refused([logo, { ...logo, filename: 'other.png' }], /^attachments\.1\.contentId: logo@courier is used by another attachment$/);
    });
  });

  it('SES receives a raw MIME message with the attachment, the inline image by cid, and the unsubscribe headers', async () => {
    await useProvider('ses');
    const res = await send({ attachments: [invoice, logo], unsubscribeUrl: 'https://example.com/unsub' });
    expect(res.status).to.equal(201);
    expect((await settled(res.body.messageLogId)).status).to.equal('sent');
    const got = ses.sent.find((s) => s.body.EmailTags.find((t: any) => t.Name === 'msg_id').Value === res.body.messageLogId)!;
    expect(got.body.Content.Simple).to.equal(undefined);
    expect(got.body.Destination.ToAddresses).to.deep.equal(['reader@example.org']);
    const mime = got.mime!;
    expect(mime.subject).to.equal('Your invoice');
    expect(mime.to).to.have.nested.property('value[0].address', 'reader@example.org');
    expect(mime.html).to.contain('cid:logo@courier');
    expect(mime.text).to.equal('Hi');
    // as written on the wire (mailparser folds List-* headers into one summary)
    const header = (name: string) => mime.headerLines.find((l) => l.key === name)?.line.replace(/\r?\n\s+/g, ' ');
    expect(header('list-unsubscribe-post')).to.equal('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    expect(header('list-unsubscribe')).to.match(new RegExp(`^List-Unsubscribe: <${app.baseUrl}/u/[^>]+>$`));
    const pdf = mime.attachments.find((a) => a.filename === 'invoice.pdf')!;
    const png = mime.attachments.find((a) => a.filename === 'logo.png')!;
    expect(pdf).to.include({ filename: 'invoice.pdf', contentType: 'application/pdf', contentDisposition: 'attachment' });
    expect(pdf.content.equals(PDF)).to.equal(true);
    expect(png).to.include({ filename: 'logo.png', contentType: 'image/png', contentDisposition: 'inline', cid: 'logo@courier', related: true });
    expect(png.content.equals(PNG)).to.equal(true);
  });

  it('SES without attachments keeps the simple content', async () => {
    await useProvider('ses');
    const res = await send({});
    expect((await settled(res.body.messageLogId)).status).to.equal('sent');
    const got = ses.sent.find((s) => s.body.EmailTags.find((t: any) => t.Name === 'msg_id').Value === res.body.messageLogId)!;
    expect(got.body.Content.Raw).to.equal(undefined);
    expect(got.body.Content.Simple.Body.Html.Data).to.contain('cid:logo@courier');
  });

  it('a ~7 MB attachment goes end to end: request, event store, worker, SES', async () => {
    await useProvider('ses');
    const big = Buffer.alloc(7 * 1024 * 1024 - 16);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 8)) & 0xff;
    const res = await send({ attachments: [{ filename: 'archive.zip', content: b64(big) }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect((await settled(res.body.messageLogId)).status).to.equal('sent');
    const got = ses.sent.find((s) => s.body.EmailTags.find((t: any) => t.Name === 'msg_id').Value === res.body.messageLogId)!;
    const [zip] = got.mime!.attachments;
    expect(zip).to.include({ filename: 'archive.zip', contentType: 'application/zip', size: big.length });
    expect(zip.content.equals(big)).to.equal(true);
    // The bytes are kept apart: the event every reader of the log reads stays small.
    const { size } = await app.infra.db('events').where({ stream_id: `message-${res.body.messageLogId}` }).first(app.infra.db.raw('max(pg_column_size(data)) AS size'));
    expect(Number(size)).to.be.below(4096);
  });

  it('a message whose attachment bytes are gone fails for good instead of sending without them', async () => {
    await useProvider('ses');
    const before = ses.sent.length;
    const sendAt = new Date(Date.now() + 1500).toISOString();
    const res = await send({ attachments: [invoice], sendAt });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(await app.infra.attachmentStore.delete([`${res.body.messageLogId}/0`])).to.equal(1);
    expect((await settled(res.body.messageLogId)).status).to.equal('failed');
    expect(ses.sent.length).to.equal(before);
  });

  it('Postmark receives Attachments, inline ones with their cid', async () => {
    await useProvider('postmark');
    const res = await send({ attachments: [invoice, logo] });
    expect((await settled(res.body.messageLogId)).status).to.equal('sent');
    const got = pm.sent.find((s) => s.body.Metadata.msg_id === res.body.messageLogId)!;
    expect(got.body.Attachments).to.deep.equal([
      { Name: 'invoice.pdf', Content: invoice.content, ContentType: 'application/pdf', ContentID: null },
      { Name: 'logo.png', Content: logo.content, ContentType: 'image/png', ContentID: 'cid:logo@courier' },
    ]);
  });

  it('the sandbox records the attachments with their bytes; list, detail and history carry no bytes', async () => {
    await useProvider('sandbox');
    const res = await send({ attachments: [invoice, logo] });
    const id = res.body.messageLogId;
    expect((await settled(id)).status).to.equal('sent');
    const db = app.infra.db;
    const rows = await db('sandbox_email_attachments').where({ message_id: id }).orderBy('position');
    expect(rows.map((r) => [r.filename, r.content_type, r.content_id, r.size])).to.deep.equal([
      ['invoice.pdf', 'application/pdf', null, PDF.length],
      ['logo.png', 'image/png', 'logo@courier', PNG.length],
    ]);
    expect(Buffer.compare(rows[0].content, PDF)).to.equal(0);
    expect(Buffer.compare(rows[1].content, PNG)).to.equal(0);

    const summaries = [
      { filename: 'invoice.pdf', contentType: 'application/pdf', contentId: null, size: PDF.length },
      { filename: 'logo.png', contentType: 'image/png', contentId: 'logo@courier', size: PNG.length },
    ];
    const list = await app.request('GET', '/api/messages?limit=100', { token: app.adminToken });
    const listed = list.body.items.find((m: any) => m.id === id);
    expect(listed.attachments).to.deep.equal(summaries);
    expect(JSON.stringify(list.body)).to.not.contain(invoice.content).and.not.contain(logo.content);
    const detail = await message(id);
    expect(detail.attachments).to.deep.equal(summaries);
    expect(JSON.stringify(detail)).to.not.contain(invoice.content);
    const history = await app.request('GET', `/api/messages/${id}/history`, { token: app.adminToken });
    expect(history.status).to.equal(200);
    expect(history.body[0].data.attachments).to.deep.equal(summaries);
    expect(JSON.stringify(history.body)).to.not.contain(invoice.content);
    // a message without attachments lists an empty list
    expect(list.body.items.every((m: any) => Array.isArray(m.attachments))).to.equal(true);
  });
});
