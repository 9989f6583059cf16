import { expect } from 'chai';
import express from 'express';
import { writeJsonWithList } from '../../src/http/stream-body.js';
import { listenLocally } from '../support/local-express.js';

describe('writeJsonWithList: a JSON object whose last field is a list, written item by item', () => {
  let server: Awaited<ReturnType<typeof listenLocally>>;
  let base: string;
  let head: Record<string, unknown>;
  let items: () => AsyncIterable<unknown>;
  before(async () => {
    const app = express();
    app.get('/json', async (_req, res) => {
      res.type('application/json');
      // a failure has cut the connection already: nothing is left to answer
      await writeJsonWithList(res, head, 'messages', items()).catch(() => {});
    });
    server = await listenLocally(app);
    base = server.base;
  });
  after(() => server?.close());
  const listOf = (values: unknown[]) =>
    async function* () {
      yield* values;
    };

  it('writes what JSON.stringify writes of the whole, with or without a head and items', async () => {
    const cases: [Record<string, unknown>, unknown[]][] = [
      [{ email: 'ada@example.org', contact: null, note: 'quote " and \u2028 and é' }, [{ id: 'a', history: [1, 'x'] }, { id: 'b', history: [] }]],
      [{}, [1]],
      [{ email: 'x' }, []],
    ];
    for (const [h, values] of cases) {
      head = h;
      items = listOf(values);
      const text = await (await fetch(`${base}/json`)).text();
      expect(text).to.equal(JSON.stringify({ ...h, messages: values }));
    }
  });

  it('an item that fails after the first bytes cuts the connection: the client cannot take the file for whole', async () => {
    head = { email: 'x' };
    items = async function* () {
      yield { id: 'a' };
      throw new Error('the database went away');
    };
    const res = await fetch(`${base}/json`);
    expect(res.status).to.equal(200);
    let error: unknown;
    await res.text().catch((err) => (error = err));
    expect(error).to.be.instanceOf(Error);
  });
});
