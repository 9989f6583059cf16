import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { readCsv, type CsvRow } from './csv-read';
import { refusalText, type RefusedEntry } from './csv-refusal';
import { ActionForm, ErrorText, useAction } from './ui';

export type { RefusedEntry };


/**
 * A CSV import: the file read in the browser, sent `batch` rows a request with a progress bar, then a
 * summary and the rows refused, by their line in the file (the header is line 1). `read` turns the
 * file into what is sent (and may refuse it, with a message); rows it leaves out are `skipped`, each
 * with why; `send` posts one batch; `summary` words the totals.
 */
export function CsvImport<T, R extends { errors?: RefusedEntry[] }>(props: {
  batch: number;
  read(fields: string[], rows: CsvRow[]): { items: { line: number; item: T }[]; skipped: string[] };
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
    const { fields, rows } = readCsv(await file!.text());
    const { items, skipped } = props.read(fields, rows);
    const rejected = [...skipped];
    const results: R[] = [];
    setProgress({ done: 0, total: items.length });
    for (let i = 0; i < items.length; i += props.batch) {
      const batch = items.slice(i, i + props.batch);
      try {
        const r = await props.send(batch.map((b) => b.item));
        const lines = batch.map((b) => b.line);
        for (const e of r.errors ?? []) rejected.push(refusalText(e, lines));
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
