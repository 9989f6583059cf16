import type { Response } from 'express';
import Papa from 'papaparse';
import { writeStreamed } from './stream-body.js';

/**
 * A cell a spreadsheet would run as a formula (`=HYPERLINK(…)`, `@SUM(…)`, `-2+3`) gets a leading `'`:
 * a bounce's diagnostic text is written by whoever runs the receiving mail server. A phone number
 * in E.164 (`+` and digits) is left as it is, so that the file imports again.
 */
const FORMULA = /^[=\-@\t\r]|^\+(?!\d+$)/;

/** Writes a CSV with a header row as the pages come (each a list of objects keyed by `columns`): writeStreamed. */
export function writeCsv(res: Response, columns: string[], pages: AsyncIterable<Record<string, unknown>[]>): Promise<void> {
  async function* lines() {
    yield Papa.unparse([columns], { newline: '\r\n' }) + '\r\n';
    for await (const page of pages) {
      yield Papa.unparse(page.map((row) => columns.map((c) => row[c] ?? '')), { newline: '\r\n', escapeFormulae: FORMULA }) + '\r\n';
    }
  }
  return writeStreamed(res, lines());
}
