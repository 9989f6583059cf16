import Papa from 'papaparse';
import { useState } from 'preact/hooks';
import { api, call } from '../api';
import { contactColumns, toContact } from '../csv-contacts';
import { navigate, useLocation, withQuery } from '../router';
import type { Contact } from '../types';
import { Table, ActionForm, ErrorText, Link, PageTitle, Status, useAction, useLoad } from '../ui';
import { PersonRequests } from './person-requests';

const STATUSES = ['subscribed', 'unsubscribed', 'bounced', 'complained', 'suppressed'] as const;
const BATCH = 500;

function Import({ onDone }: { onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [listId, setListId] = useState('');
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [refused, setRefused] = useState<string[]>([]);
  const run = useAction(async () => {
    setResult(null);
    setRefused([]);
    setProgress(null);
    const parsed = await new Promise<Papa.ParseResult<Record<string, string>>>((resolve, reject) =>
      Papa.parse<Record<string, string>>(file!, { header: true, skipEmptyLines: 'greedy', transformHeader: (h) => h.trim(), complete: resolve, error: reject }),
    );
    if (parsed.errors.length) throw new Error(`The CSV could not be read: row ${(parsed.errors[0].row ?? 0) + 2}: ${parsed.errors[0].message}`);
    const columns = contactColumns(parsed.meta.fields ?? []);
    const rows = parsed.data.map((row) => toContact(row, columns));
    const totals = { created: 0, updated: 0, unchanged: 0 };
    const rejected: string[] = [];
    setProgress({ done: 0, total: rows.length });
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      try {
        const r = await call<typeof totals & { errors?: { index: number; email?: string; message: string }[] }>(
          api.POST('/api/contacts/import', { body: { contacts: batch, listId: listId || undefined } }),
        );
        // line numbers as a spreadsheet shows them: the header is line 1
        for (const e of r.errors ?? []) rejected.push(`Line ${i + e.index + 2}${e.email ? ` (${e.email})` : ''}: ${e.message}`);
        totals.created += r.created;
        totals.updated += r.updated;
        totals.unchanged += r.unchanged;
      } catch (e) {
        throw new Error(`Rows ${i + 1}–${i + batch.length} were refused: ${(e as Error).message}`);
      }
      setProgress({ done: i + batch.length, total: rows.length });
    }
    setRefused(rejected);
    setResult(
      `Imported ${rows.length - rejected.length} of ${rows.length} contacts: ${totals.created} created, ${totals.updated} updated, ${totals.unchanged} unchanged.`,
    );
    onDone();
  });
  return (
    <section aria-labelledby="import">
      <h2 id="import">Import from CSV</h2>
      <ActionForm class="inline" onSubmit={() => run.run()}>
        <label>
          CSV file
          <input type="file" accept=".csv,text/csv" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        <label>
          Add to list
          <input value={listId} onInput={(e) => setListId(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={run.busy || !file}>
          Import
        </button>
      </ActionForm>
      <p class="help">
        A header row names the columns: email, firstName, lastName, company, status, tags and listIds (several separated by ;). Other spellings of
        them are understood too, such as Email Address, First Name or last_name.
      </p>
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
    </section>
  );
}

export function Contacts() {
  const { query } = useLocation();
  const filters = { search: query.get('search') ?? '', status: query.get('status') ?? '', tag: query.get('tag') ?? '', listId: query.get('listId') ?? '', page: query.get('page') ?? '1' };
  const list = useLoad(
    () =>
      call<{ items: Contact[]; total: number; page: number; totalPages: number }>(
        api.GET('/api/contacts', {
          params: {
            query: {
              search: filters.search || undefined,
              status: (filters.status || undefined) as (typeof STATUSES)[number] | undefined,
              tag: filters.tag || undefined,
              listId: filters.listId || undefined,
              page: Number(filters.page),
              limit: 25,
            },
          },
        }),
      ),
    [JSON.stringify(filters)],
  );
  const [draft, setDraft] = useState(filters);
  const page = Number(filters.page);
  return (
    <>
      <PageTitle>Contacts</PageTitle>
      <ActionForm class="filters" role="search" onSubmit={() => navigate(withQuery('/contacts', { ...draft, page: undefined }))}>
        <label>
          Search
          <input type="search" value={draft.search} onInput={(e) => setDraft({ ...draft, search: e.currentTarget.value })} />
        </label>
        <label>
          Status
          <select value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value })}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Tag
          <input value={draft.tag} onInput={(e) => setDraft({ ...draft, tag: e.currentTarget.value })} />
        </label>
        <label>
          List
          <input value={draft.listId} onInput={(e) => setDraft({ ...draft, listId: e.currentTarget.value })} />
        </label>
        <button type="submit">Apply filters</button>
      </ActionForm>
      <ErrorText error={list.error} />
      {list.data && (
        <>
          <p>{list.data.total} contacts</p>
          <Table columns={['Email', 'Name', 'Company', 'Status', 'Tags', 'Lists']}>
            {list.data.items.map((c) => (
              <tr key={c.id}>
                <td>{c.email}</td>
                <td>{[c.firstName, c.lastName].filter(Boolean).join(' ')}</td>
                <td>{c.company}</td>
                <td>
                  <Status value={c.status} />
                </td>
                <td>{c.tags.join(', ')}</td>
                <td>{c.listIds.join(', ')}</td>
              </tr>
            ))}
          </Table>
          <nav class="pager" aria-label="Pages">
            {page > 1 && <Link href={withQuery('/contacts', { ...filters, page: String(page - 1) })}>Previous page</Link>}
            {page < list.data.totalPages && <Link href={withQuery('/contacts', { ...filters, page: String(page + 1) })}>Next page</Link>}
          </nav>
        </>
      )}
      <Import onDone={list.reload} />
      <PersonRequests onErased={list.reload} />
    </>
  );
}
