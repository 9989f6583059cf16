import { expect } from 'chai';
import { singleLine } from '../../../src/domain/email/header-line.js';
import { formatFromHeader } from '../../../src/domain/email/address.js';

describe('single-line header values', () => {
  it('collapses each run of line breaks of any kind to one space, and leaves the rest alone', () => {
    expect(singleLine('Hi\r\nBcc: evil@x.com')).to.equal('Hi Bcc: evil@x.com');
    expect(singleLine('a\u2028b\u2029c\u0085d\r\ne\rf\ng\u000bh\u000ci')).to.equal('a b c d e f g h i');
    expect(singleLine('a\r\n\r\n\u2028b')).to.equal('a b');
    expect(singleLine('Tab\tand  spaces, Łódź, 😀')).to.equal('Tab\tand  spaces, Łódź, 😀');
  });

  it("From's display name too, before it is quoted or encoded", () => {
    expect(formatFromHeader('Acme\r\nBcc: evil@x.com', 'a@b.c')).to.equal('"Acme Bcc: evil@x.com" <a@b.c>');
    expect(formatFromHeader('Łódź\u2028News', 'a@b.c')).to.equal(`=?UTF-8?B?${Buffer.from('Łódź News').toString('base64')}?= <a@b.c>`);
    expect(formatFromHeader('\u2029', 'a@b.c')).to.equal('a@b.c');
  });
});
