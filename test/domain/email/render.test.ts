import { expect } from 'chai';
import Mustache from 'mustache';
import { createTemplateCache, renderTemplate } from '../../../src/domain/email/render.js';

describe('renderTemplate', () => {
  it('fills placeholders: HTML-escaped in html, as written in subject and text; text without tags as itself', () => {
    const variables = { name: 'Tom & <Jerry>' };
    expect(renderTemplate({ subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: '{{name}}, {{missing}}!' }, variables)).to.deep.equal({
      subject: 'Hi Tom & <Jerry>',
      html: '<p>Tom &amp; &lt;Jerry&gt;</p>',
      text: 'Tom & <Jerry>, !',
    });
    expect(renderTemplate({ subject: 'a & b', html: '<p>a &amp; {b}</p>', text: '}}' }, variables)).to.deep.equal({
      subject: 'a & b',
      html: '<p>a &amp; {b}</p>',
      text: '}}',
    });
  });

  it('a template error is a 400 naming the field', () => {
    expect(() => renderTemplate({ subject: 's', html: '{{#open}}', text: 't' }, {})).to.throw('html: template error: Unclosed section "open"');
  });

  it("leaves Mustache's own cache alone, which kept every body it ever rendered", () => {
    const cached = () => Object.keys((Mustache.templateCache as unknown as { _cache: object })._cache).length;
    const before = cached();
    for (let i = 0; i < 200; i++) renderTemplate({ subject: `Order {{n}} ${i}`, html: `<p>{{n}} ${i}</p>`, text: `{{n}} ${i}` }, { n: i });
    expect(cached()).to.equal(before);
  });
});

describe('template cache', () => {
  it('keeps at most its size in template text, dropping the least recently used first', () => {
    const cache = createTemplateCache(80);
    for (const key of ['a'.repeat(10), 'b'.repeat(10), 'c'.repeat(10)]) cache.set(key, key.toUpperCase());
    expect(cache.get('a'.repeat(10))).to.equal('A'.repeat(10)); // a is now the most recent
    for (let i = 0; i < 6; i++) cache.set(`${i}`.repeat(10), 'x'); // 90 characters in all: one must go
    expect(cache.size).to.equal(8);
    expect(cache.get('b'.repeat(10))).to.equal(undefined);
    expect(cache.get('a'.repeat(10))).to.equal('A'.repeat(10));
    cache.set('z'.repeat(11), 'too long'); // over an eighth of the size: never kept
    expect(cache.get('z'.repeat(11))).to.equal(undefined);
    cache.clear();
    expect(cache.size).to.equal(0);
  });
});
