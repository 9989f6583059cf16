import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import Papa from 'papaparse';

/**
 * A cell a spreadsheet would run as a formula (`=HYPERLINK(…)`, `@SUM(…)`, `-2+3`) gets a leading `'`:
 * a bounce's diagnostic text is written by whoever runs the receiving mail server. A phone number
 * in E.164 (`+` and digits) is left as it is, so that the file imports again.
 */
const FORMULA = /^[=\-@\t\r]|^\+(?!\d+$)/;

/**
 * Writes a CSV with a header row as the pages come (each a list of objects keyed by `columns`), holding
 * no more than a page and waiting for a slow client. A page that fails once the first bytes are out
 * cuts the connection (the error goes on to the error handler), so the client never takes a
 * truncated file for a whole one; a client that goes away stops the reading.
 */
export async function writeCsv(res: Response, columns: string[], pages: AsyncIterable<Record<string, unknown>[]>): Promise<void> {
  async function* lines() {
    yield Papa.unparse([columns], { newline: '\r\n' }) + '\r\n';
    for await (const page of pages) {
      yield Papa.unparse(page.map((row) => columns.map((c) => row[c] ?? '')), { newline: '\r\n', escapeFormulae: FORMULA }) + '\r\n';
    }
  }
  try {
    await pipeline(Readable.from(lines()), res);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  }
}
