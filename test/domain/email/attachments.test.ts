import { expect } from 'chai';
import { checkAttachments, CONTENT_ID_PATTERN } from '../../../src/domain/email/attachments.js';

const typeOf = () => 'application/pdf';
const check = (content: string) => checkAttachments([{ filename: 'a.pdf', content }], typeOf);

describe('attachment content: standard padded base64, decoded once by the check', () => {
  it('takes standard padded base64 of every length and gives its bytes and size', () => {
    for (let n = 0; n <= 40; n++) {
      const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 251 + 7) & 0xff));
      const result = check(bytes.toString('base64'));
      expect(result.ok, `${n} bytes`).to.equal(true);
      if (!result.ok) continue;
      expect(result.attachments[0].bytes.equals(bytes)).to.equal(true);
      expect(result.attachments[0].size).to.equal(n);
    }
  });

  it('refuses the URL-safe alphabet, whitespace, line breaks, missing or misplaced padding, and other characters', () => {
    for (const bad of ['AB-_', 'AB+-', 'QUF_', 'QU FB', 'QUFB\nQUFB', 'QUFB\r\nQUFB', 'QQ', 'QUF', 'QQ=A', 'QQ==QUFB', 'Q===', '====', 'QUFB====', 'QU*B', 'QUFBQ!==', 'é€AA', '\u0000AAA']) {
      const result = check(bad);
      expect(result, JSON.stringify(bad)).to.deep.equal({ ok: false, field: 'attachments.0.content', message: 'must be valid base64 (standard alphabet, padded, no line breaks)' });
    }
  });
});

describe('content ids', () => {
  it('are printable ASCII without spaces, angle brackets or quotes: they go into Content-ID as they are', () => {
    for (const good of ['logo', 'logo@courier', 'part.1_a-b', "!#$%&'()*+,-./:;=?@[]^_`{|}~"]) expect(CONTENT_ID_PATTERN.test(good), good).to.equal(true);
    for (const bad of ['café', 'logo\u200b', 'a b', 'a\tb', 'a<b', 'a>b', 'a"b', 'a\u007fb', 'a\r\nb', '']) expect(CONTENT_ID_PATTERN.test(bad), JSON.stringify(bad)).to.equal(false);
  });
});
