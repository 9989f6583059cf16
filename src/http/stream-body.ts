import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';

/**
 * Writes a body as its parts come, waiting for a slow client and holding no more than a part. A part
 * that fails once the first bytes are out cuts the connection (the error goes on to the error
 * handler), so the client never takes a truncated file for a whole one; a client that goes away stops
 * the reading.
 */
export async function writeStreamed(res: Response, parts: AsyncIterable<string>): Promise<void> {
  try {
    await pipeline(Readable.from(parts), res);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  }
}

/**
 * A JSON object whose last field is a long list, written item by item: `{...head, [field]: [items]}`
 * as `JSON.stringify` would write it.
 */
export function writeJsonWithList(res: Response, head: Record<string, unknown>, field: string, items: AsyncIterable<unknown>): Promise<void> {
  async function* parts() {
    const opening = JSON.stringify(head);
    yield `${opening.slice(0, -1)}${opening.length > 2 ? ',' : ''}${JSON.stringify(field)}:[`;
    let first = true;
    for await (const item of items) {
      yield (first ? '' : ',') + JSON.stringify(item);
      first = false;
    }
    yield ']}';
  }
  return writeStreamed(res, parts());
}
