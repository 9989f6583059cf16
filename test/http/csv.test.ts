import { expect } from 'chai';
import express from 'express';
import { writeCsv } from '../../src/http/csv.js';
import { listenLocally } from '../support/local-express.js';

describe('writeCsv: a CSV response written page by page', () => {
  let server: Awaited<ReturnType<typeof listenLocally>>;
  let base: string;
  let pages: () => AsyncIterable<Record<string, unknown>[]>;
  let failure: unknown;
  before(async () => {
    const app = express();
    app.get('/csv', async (_req, res) => {
      res.type('text/csv');
      try {
        await writeCsv(res, ['a', 'b'], pages());
      } catch (err) {
        failure = err;
      }
    });
    server = await listenLocally(app);
    base = server.base;
  });
  after(() => server?.close());
  beforeEach(() => (failure = undefined));

  it('writes the header, then each page; quotes what needs quoting and leaves empty what is missing', async () => {
    pages = async function* () {
      yield [{ a: 'x, y', b: 'say "hi"' }];
      yield [{ a: 'line\nbreak' }, { b: 2 }];
    };
    expect(await (await fetch(`${base}/csv`)).text()).to.equal('a,b\r\n"x, y","say ""hi"""\r\n"line\nbreak",\r\n,2\r\n');
  });

  it('defuses formulas but leaves an E.164 number and plain text alone', async () => {
    pages = async function* () {
      yield [{ a: '=1+1', b: '+14155550100' }, { a: '-2', b: '+1 (415) 555' }, { a: '@SUM(A1)', b: 'plain' }];
    };
    expect(await (await fetch(`${base}/csv`)).text()).to.equal(`a,b\r\n"'=1+1",+14155550100\r\n"'-2","'+1 (415) 555"\r\n"'@SUM(A1)",plain\r\n`);
  });

  it('a page that fails after the first bytes cuts the connection: the client cannot take the file for whole', async () => {
    pages = async function* () {
      yield [{ a: 1, b: 2 }];
      throw new Error('the database went away');
    };
    const res = await fetch(`${base}/csv`);
    expect(res.status).to.equal(200);
    let error: unknown;
    await res.text().catch((err) => (error = err));
    expect(error, 'the body must not end as if complete').to.be.instanceOf(Error);
    expect(String(failure)).to.include('the database went away');
  });

  it('a client that goes away stops the reading of pages', async () => {
    let read = 0;
    let finished = false;
    pages = async function* () {
      try {
        for (;;) {
          read++;
          yield Array.from({ length: 1000 }, (_, i) => ({ a: i, b: 'x'.repeat(100) }));
        }
      } finally {
        finished = true;
      }
    };
    const controller = new AbortController();
    const res = await fetch(`${base}/csv`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const until = Date.now() + 5000;
    while (!finished && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(finished).to.equal(true);
    expect(read).to.be.below(100);
    expect(failure).to.equal(undefined);
  });
});
