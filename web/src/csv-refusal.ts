/** An entry the server refused, by its index in the batch it was sent in. */
export interface RefusedEntry {
  index: number;
  value?: string;
  email?: string;
  message: string;
}

/** How the service names another entry of the same request: `duplicate of contacts[10] in this request`. */
const OTHER_ENTRY = /duplicate of \w+\[(\d+)\] in this request/;

/**
 * A refused entry in the file's terms, `lines` being the line of each entry of its batch: its line,
 * what it named, and why, with another entry of the batch it points at named by its line too (an
 * index in a batch means nothing to whoever reads the file).
 */
export function refusalText(entry: RefusedEntry, lines: readonly number[]): string {
  const named = entry.value ?? entry.email;
  const message = entry.message.replace(OTHER_ENTRY, (said, index: string) => (lines[Number(index)] === undefined ? said : `duplicate of line ${lines[Number(index)]}`));
  return `Line ${lines[entry.index]}${named ? ` (${named})` : ''}: ${message}`;
}
