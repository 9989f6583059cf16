import { expect } from 'chai';
import { readCsv } from '../../web/src/csv-read.js';

describe('dashboard: a CSV file read with the line each record starts on', () => {
  const lines = (text: string) => readCsv(text).rows.map((r) => [r.line, r.record.email]);

  it('counts blank lines, rows of separators only and line breaks inside quoted cells, as the file has them', () => {
    const text = ['email,note', '', 'a@example.org,one', ',,', ' , ', 'b@example.org,"two', 'lines"', '', 'c@example.org,three'].join('\n');
    expect(lines(text)).to.deep.equal([
      [3, 'a@example.org'],
      [6, 'b@example.org'],
      [9, 'c@example.org'],
    ]);
    expect(readCsv(text).rows[1].record).to.deep.equal({ email: 'b@example.org', note: 'two\nlines' });
  });

  it('reads CRLF and CR line ends alike, and a file of one column (no delimiter to guess)', () => {
    expect(lines('email\r\n\r\na@example.org\r\n"b@\r\nexample.org"\r\nc@example.org')).to.deep.equal([
      [3, 'a@example.org'],
      [4, 'b@\r\nexample.org'],
      [6, 'c@example.org'],
    ]);
    expect(lines('email\ra@example.org\r\rb@example.org\r')).to.deep.equal([
      [2, 'a@example.org'],
      [4, 'b@example.org'],
    ]);
    expect(readCsv(' Email Address \n').fields).to.deep.equal(['Email Address']);
  });

  it('refuses a file it cannot read, saying the line: a quote left open, a row of more or fewer cells than the header', () => {
    expect(() => readCsv('email,note\n\na@example.org,ok\n"b@example.org,open\nmore\n')).to.throw('The CSV could not be read: line 4: Quoted field unterminated');
    expect(() => readCsv('email,note\n\n\na@example.org,ok,extra\n')).to.throw('The CSV could not be read: line 4: 3 cells where the header row has 2');
    expect(() => readCsv('email,note\na@example.org\n')).to.throw('The CSV could not be read: line 2: 1 cell where the header row has 2');
  });
});
