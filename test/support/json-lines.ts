import type { Readable } from 'node:stream';

/** Calls `onMessage` with each line of `stream` parsed as JSON (a child process reporting on stdout). */
export function onJsonLines(stream: Readable, onMessage: (message: any, line: string) => void): void {
  let buffer = '';
  stream.on('data', (chunk) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      onMessage(JSON.parse(line), line);
    }
  });
}
