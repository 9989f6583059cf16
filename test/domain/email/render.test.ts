import { expect } from 'chai';
import Mustache from 'mustache';
import { createTemplateCache, hasPlaceholders, renderTemplate } from '../../../src/domain/email/render.js';

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

  it('renders sections, lists, dotted names and the current item as Mustache does', () => {
    const variables = { order: { id: 'A1', items: [{ name: 'Tea', qty: 2 }, { name: 'Cake', qty: 1 }] }, tags: ['x', 'y'], note: 'abc', empty: [] };
    const text = '{{order.id}}:{{#order.items}} {{qty}}x{{name}}{{/order.items}};{{#tags}}[{{.}}]{{/tags}};{{note.length}};{{^empty}}none{{/empty}};{{#note}}{{length}}{{/note}}';
    expect(renderTemplate({ subject: 's', html: 'h', text }, variables).text).to.equal('A1: 2xTea 1xCake;[x][y];3;none;');
  });

  it('a name reaches the variables only, never what every object inherits (whose functions Mustache would call)', () => {
    const text = '[{{constructor}}][{{toString}}][{{tags.map}}][{{#constructor.prototype.__defineGetter__}}x{{/constructor.prototype.__defineGetter__}}][{{__proto__}}]';
    expect(renderTemplate({ subject: 's', html: 'h', text }, { tags: ['a'] }).text).to.equal('[][][][][]');
  });

  it('a template that would render too much is a 400 naming the field, before it has built the body', () => {
    const nested = (depth: number) => `${'{{#a}}'.repeat(depth)}xxxxxxxxxx${'{{/a}}'.repeat(depth)}`;
    const variables = { a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] };
    // three levels: a thousand repeats of the body, a real template's order of magnitude
    expect(renderTemplate({ subject: 's', html: nested(3), text: 't' }, variables).html).to.have.length(10_000);
    // nine levels would be 10 GB
    expect(() => renderTemplate({ subject: 's', html: nested(9), text: 't' }, variables)).to.throw(/^html: template renders too much/);
    expect(() => renderTemplate({ subject: 's', html: 'h', text: `${'{{#a}}'.repeat(8)}${'{{/a}}'.repeat(8)}` }, variables)).to.throw(/^text: template renders too much/);
  });

  it('what a template may render is bounded by what it was made from: a few KB cannot make megabytes; a thousand-line receipt renders', () => {
    // four sections over ten items of 300 characters: 3 MB a message from 3 KB of request
    const amplified = { subject: 's', html: '{{#a}}{{#a}}{{#a}}{{#a}}{{b}}{{/a}}{{/a}}{{/a}}{{/a}}', text: 't' };
    expect(() => renderTemplate(amplified, { a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], b: 'x'.repeat(300) })).to.throw(/^html: template renders too much \(over 1\.\d MB, 16 times its template and variables/);
    const lines = Array.from({ length: 1_000 }, (_, i) => ({ name: `Item ${i} with a longer description of what it is`, qty: i % 5, price: `${i}.99` }));
    const receipt = { subject: 'Your order', html: '<table>{{#lines}}<tr><td>{{name}}</td><td>{{qty}}</td><td>{{price}}</td><td>in stock, ships in two days</td></tr>{{/lines}}</table>', text: '{{#lines}}{{name}} x{{qty}}\n{{/lines}}' };
    expect(renderTemplate(receipt, { lines }).html.length).to.be.greaterThan(100_000);
  });

  it('a subject longer than 998 characters once filled in is a 400', () => {
    expect(() => renderTemplate({ subject: 'Hi {{name}}', html: 'h', text: 't' }, { name: 'n'.repeat(996) })).to.throw('subject: longer than 998 characters once its placeholders are filled');
    expect(renderTemplate({ subject: 'Hi {{name}}', html: 'h', text: 't' }, { name: 'n'.repeat(995) }).subject).to.have.length(998);
  });

  it("leaves Mustache's own cache alone, which kept every body it ever rendered", () => {
    const cached = () => Object.keys((Mustache.templateCache as unknown as { _cache: object })._cache).length;
    const before = cached();
    for (let i = 0; i < 200; i++) renderTemplate({ subject: `Order {{n}} ${i}`, html: `<p>{{n}} ${i}</p>`, text: `{{n}} ${i}` }, { n: i });
    expect(cached()).to.equal(before);
  });
});

describe('hasPlaceholders', () => {
  it('a send has placeholders with a templateId or variables (even none), not without either', () => {
    expect(hasPlaceholders({})).to.equal(false);
    expect(hasPlaceholders({ variables: {} })).to.equal(true);
    expect(hasPlaceholders({ templateId: 'clh3am1yr0000qzrmn831i7rn' })).to.equal(true);
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
