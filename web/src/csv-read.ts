import Papa from 'papaparse';

/** A record of a CSV file with a header row, and the line of the file it starts on (the header is line 1). */
export interface CsvRow {
  line: number;
  record: Record<string, string>;
}

const BREAK = /\r\n|\r|\n/g;
const breaks = (text: string) => text.match(BREAK)?.length ?? 0;
/** papaparse's 'greedy' empty line: nothing but separators and spaces */
const blank = (cells: string[]) => cells.join('').trim() === '';

/**
 * A CSV file's header and records, each with the line it starts on, or throws why the file cannot be
 * read and on which line. Rows are read one at a time from where the last one ended (papaparse's
 * cursor), so blank lines and quoted cells holding line breaks are counted as the file has them;
 * blank rows are skipped here, which is why the header is matched to the cells here too.
 */
export function readCsv(text: string): { fields: string[]; rows: CsvRow[] } {
  let fields: string[] | null = null;
  const rows: CsvRow[] = [];
  let start = 0;
  let line = 1;
  let failure: string | null = null;
  Papa.parse<string[]>(text, {
    step: (result, parser) => {
      const cells = result.data;
      const at = line;
      line += breaks(text.slice(start, result.meta.cursor));
      start = result.meta.cursor;
      // papaparse lists its delimiter guess among the errors: a file of one column has no delimiter to
      // find, and the comma it falls back to reads that file as it is
      const error = result.errors.find((e) => e.type !== 'Delimiter');
      if (!error && blank(cells)) return;
      if (!error && fields && cells.length !== fields.length) {
        failure = `line ${at}: ${cells.length} ${cells.length === 1 ? 'cell' : 'cells'} where the header row has ${fields.length}`;
      } else if (error) failure = `line ${at}: ${error.message}`;
      if (failure) {
        parser.abort();
        return;
      }
      if (!fields) fields = cells.map((h) => h.trim());
      else rows.push({ line: at, record: Object.fromEntries(fields.map((f, i) => [f, cells[i]])) });
    },
  });
  if (failure) throw new Error(`The CSV could not be read: ${failure}`);
  return { fields: fields ?? [], rows };
}
