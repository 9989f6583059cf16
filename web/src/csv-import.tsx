import Papa from 'papaparse';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ActionForm, ErrorText, useAction } from './ui';

/** An entry the server refused, by its index in the batch it was sent in. */
export interface RefusedEntry {
  index: number;
  value?: string;
  email?: string;
  message: string;
}

/** Parses a CSV file with a header row, refusing a file that cannot be read with where it failed. */
async function readCsv(file: File): Promise<Papa.ParseResult<Record<string, string>>> {
  const parsed = await new Promise<Papa.ParseResult<Record<string, string>>>((resolve, reject) =>
    Papa.parse<Record<string, string>>(file, { header: true, skipEmptyLines: 'greedy', transformHeader: (h) => h.trim(), complete: resolve, error: reject }),
  );
  // papaparse lists its delimiter guess among the errors: a file of one column has no delimiter to
  // find, and the comma it falls back to reads that file as it is
  const errors = parsed.errors.filter((e) => e.type !== 'Delimiter');
  if (errors.length) throw new Error(`The CSV could not be read: row ${(errors[0].row ?? 0) + 2}: ${errors[0].message}`);
  return parsed;
}

/**
 * A CSV import: the file read in the browser, sent `batch` rows a request with a progress bar, then a
 * summary and the rows refused, by their line in the file (the header is line 1). `read` turns the
 * file into what is sent (and may refuse it, with a message); rows it leaves out are `skipped`, each
 * with why; `send` posts one batch; `summary` words the totals.
 */
export function CsvImport<T, R extends { errors?: RefusedEntry[] }>(props: {
  batch: number;
  read(fields: string[], rows: Record<string, string>[]): { items: { line: number; item: T }[]; skipped: string[] };
  send(items: T[]): Promise<R>;
  summary(results: R[], sent: number, refused: number): string;
  help: ComponentChildren;
  children?: ComponentChildren;
  onDone(): void;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [refused, setRefused] = useState<string[]>([]);
  const run = useAction(async () => {
    setResult(null);
    setRefused([]);
    setProgress(null);
    const parsed = await readCsv(file!);
    const { items, skipped } = props.read(parsed.meta.fields ?? [], parsed.data);
    const rejected = [...skipped];
    const results: R[] = [];
    setProgress({ done: 0, total: items.length });
    for (let i = 0; i < items.length; i += props.batch) {
      const batch = items.slice(i, i + props.batch);
      try {
        const r = await props.send(batch.map((b) => b.item));
        for (const e of r.errors ?? []) {
          const named = e.value ?? e.email;
          rejected.push(`Line ${batch[e.index].line}${named ? ` (${named})` : ''}: ${e.message}`);
        }
        results.push(r);
      } catch (e) {
        throw new Error(`Lines ${batch[0].line}–${batch[batch.length - 1].line} were refused: ${(e as Error).message}`);
      }
      setProgress({ done: i + batch.length, total: items.length });
    }
    setRefused(rejected);
    setResult(props.summary(results, items.length, rejected.length - skipped.length));
    props.onDone();
  });
  return (
    <>
      <ActionForm class="inline" onSubmit={() => run.run()}>
        <label>
          CSV file
          <input type="file" accept=".csv,text/csv" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        {props.children}
        <button type="submit" disabled={run.busy || !file}>
          Import
        </button>
      </ActionForm>
      <p class="help">{props.help}</p>
      {progress && (
        <p>
          <label>
            Import progress{' '}
            <progress max={progress.total} value={progress.done}>
              {progress.done} of {progress.total}
            </progress>
          </label>{' '}
          {progress.done} of {progress.total}
        </p>
      )}
      <ErrorText error={run.error} />
      {result && <p role="status">{result}</p>}
      {refused.length > 0 && (
        <div role="alert" class="error">
          <p>
            {refused.length} {refused.length === 1 ? 'row was' : 'rows were'} not imported:
          </p>
          <ul>
            {refused.slice(0, 20).map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
          {refused.length > 20 && <p>…and {refused.length - 20} more.</p>}
        </div>
      )}
    </>
  );
}
