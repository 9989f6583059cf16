import { expect } from 'chai';
import { checkAttachments, CONTENT_ID_PATTERN, FILENAME_RULE } from '../../../src/domain/email/attachments.js';

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

describe('attachment filenames', () => {
  const named = (filename: string) => checkAttachments([{ filename, content: 'YWJj' }], () => 'text/plain');
  const refused = (filename: string) => {
    const result = named(filename);
    return result.ok ? null : `${result.field}: ${result.message}`;
  };

  it('refuses characters Windows does not allow in a name, control characters and invisible format characters', () => {
    const bypasses = ['x.exe:', 'x.exe:Zone.Identifier', 'x.exe::$DATA', 'x.exe*', 'x.bat?', 'x.exe"', 'x.exe<', 'x.exe>', 'x.exe|', 'x.exe/', 'x.exe\\', 'x.exe\u200b', 'x.exe\u2060', 'x.exe\ufeff', 'x\u202egpj.exe', 'x.e\u00adxe', 'x.exe\u0000', 'x.exe\u001f', 'x.exe\u007f', 'x.exe\u0085', 'x.exe\u2028', 'x.exe\u2029'];
    for (const filename of [...bypasses, 'report:2024.pdf', 'a?.txt']) expect(refused(filename), JSON.stringify(filename)).to.equal(`attachments.0.filename: ${FILENAME_RULE}`);
  });

  it('the extension check reads the name without the trailing dots, spaces and semicolons a client drops, and up to its first semicolon', () => {
    for (const [filename, extension] of [['x.scr;', 'scr'], ['x.exe. . ', 'exe'], ['x.exe; ', 'exe'], ['x.exe;.txt', 'exe'], ['X.EXE', 'exe']]) {
      expect(refused(filename), filename).to.equal(`attachments.0.filename: .${extension} files are refused as attachments (executable or script types)`);
    }
  });

  it('refuses the programs, add-ins and scripts mail providers block, whatever the case', () => {
    const extensions = ['exe', 'dll', 'xlam', 'xll', 'ade', 'adp', 'mde', 'lib', 'vxd', 'nsh', 'ex_', 'diagcfg', 'diagpack', 'diagcab'];
    for (const extension of extensions) {
      for (const filename of [`x.${extension}`, `X.${extension.toUpperCase()}`]) {
        expect(refused(filename), filename).to.equal(`attachments.0.filename: .${extension} files are refused as attachments (executable or script types)`);
      }
    }
  });

  it('takes ordinary names in any script, with spaces, semicolons and brackets', () => {
    for (const filename of ['invoice 2024-05.pdf', 'Łódź — zamówienie.pdf', '日本語.txt', 'notes;v2.txt', 'photo (1).jpg', '[draft] plan.docx', "O'Brien.csv", 'emoji 😀.png']) {
      expect(refused(filename), filename).to.equal(null);
    }
  });
});

describe('attachment content types', () => {
  const typed = (contentType: string) => {
    const result = checkAttachments([{ filename: 'notes.txt', content: 'YWJj', contentType }], () => 'text/plain');
    return result.ok ? null : `${result.field}: ${result.message}`;
  };

  it("refuses the type of every refused extension, as well as its extension: a harmless name does not make a program's type safe", () => {
    const types = [
      'application/x-msdownload',
      'text/x-shellscript',
      'text/x-sh',
      'application/x-shar',
      'application/java-vm',
      'application/node',
      'application/vnd.ms-cab-compressed',
      'application/vnd.ms-htmlhelp',
      'application/x-chrome-extension',
      'application/x-xpinstall',
      'application/x-redhat-package-manager',
      'application/msix',
      'application/appx',
      'application/x-virtualbox-vhd',
    ];
    for (const type of types) expect(typed(type), type).to.equal(`attachments.0.contentType: ${type} is refused as an attachment type (executable or script types)`);
  });

  it('refuses every macro-enabled Office type, in any case and with parameters', () => {
    const macroEnabled = [
      'application/vnd.ms-word.document.macroEnabled.12',
      'application/vnd.ms-word.template.macroEnabled.12',
      'application/vnd.ms-excel.sheet.macroEnabled.12',
      'application/vnd.ms-excel.template.macroEnabled.12',
      'application/vnd.ms-excel.addin.macroEnabled.12',
      'application/vnd.ms-excel.sheet.binary.macroEnabled.12',
      'application/vnd.ms-powerpoint.presentation.macroEnabled.12',
      'application/vnd.ms-powerpoint.template.macroEnabled.12',
      'application/vnd.ms-powerpoint.addin.macroEnabled.12',
      'application/vnd.ms-powerpoint.slideshow.macroEnabled.12',
      'application/vnd.ms-powerpoint.slide.macroEnabled.12',
      'APPLICATION/VND.MS-EXCEL.ADDIN.MACROENABLED.12; name="a.xlam"',
    ];
    for (const type of macroEnabled) expect(typed(type), type).to.match(/^attachments\.0\.contentType: .* is refused as an attachment type/);
  });

  it('takes documents, images and archives', () => {
    for (const type of ['application/pdf', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/vnd.ms-excel', 'text/plain; charset=utf-8', 'image/png', 'application/zip', 'application/octet-stream', 'text/csv']) {
      expect(typed(type), type).to.equal(null);
    }
  });
});
