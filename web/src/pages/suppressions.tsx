import { useState } from 'preact/hooks';
import { api, call } from '../api';
import { CsvImport, type RefusedEntry } from '../csv-import';
import { suppressionColumns, toSuppression, type SuppressionEntry } from '../csv-suppressions';
import { navigate, useLocation, withQuery } from '../router';
import type { Suppression } from '../types';
import { Table, ActionForm, ConfirmButton, ErrorText, Link, PageTitle, formatTime, saveFile, useAction, useLoad } from '../ui';

const BATCH = 500;

/** Bringing a list from another provider, and taking ours away. */
function Transfer({ onDone }: { onDone: () => void }) {
  type Totals = { suppressed: number; alreadySuppressed: number; errors?: RefusedEntry[] };
  const [notify, setNotify] = useState(true);
  const exportAll = useAction(async () => {
    const csv = await call<Blob>(api.POST('/api/suppressions/export', { parseAs: 'blob' }));
    saveFile(csv, `suppressions-${new Date().toISOString().slice(0, 10)}.csv`);
  });
  return (
    <section aria-labelledby="transfer">
      <h2 id="transfer">Import and export</h2>
      <p>
        <button type="button" class="secondary" disabled={exportAll.busy} onClick={() => exportAll.run()}>
          Export all as CSV
        </button>
      </p>
      <ErrorText error={exportAll.error} />
      <CsvImport<SuppressionEntry, Totals>
        batch={BATCH}
        read={(fields, rows) => {
          const columns = suppressionColumns(fields);
          const items: { line: number; item: SuppressionEntry }[] = [];
          const skipped: string[] = [];
          for (const { line, record } of rows) {
            const entry = toSuppression(record, columns);
            if ('skip' in entry) skipped.push(`Line ${line}: ${entry.skip}`);
            else items.push({ line, item: entry });
          }
          return { items, skipped };
        }}
        send={(entries) => call<Totals>(api.POST('/api/suppressions/import', { body: { entries, notify } }))}
        summary={(results, sent, refused) => {
          const sum = (k: 'suppressed' | 'alreadySuppressed') => results.reduce((n, r) => n + r[k], 0);
          return `Imported ${sent - refused} of ${sent} entries: ${sum('suppressed')} newly suppressed, ${sum('alreadySuppressed')} already suppressed.`;
        }}
        help="A header row names the columns: email or phone, and optionally reason (bounced, complained, unsubscribed or manual) and detail. Other providers' names for them (Email Address, SuppressionReason) and their reasons (HardBounce, BOUNCE, SpamComplaint) are understood, so Postmark's export and ours import as they are."
        onDone={onDone}
      >
        <label class="check">
          <input type="checkbox" checked={notify} onChange={(e) => setNotify(e.currentTarget.checked)} />
          Tell my webhooks (contact.suppressed for each new entry)
        </label>
      </CsvImport>
    </section>
  );
}

export function Suppressions() {
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const cursor = query.get('cursor') ?? '';
  const list = useLoad(
    () => call<{ items: Suppression[]; nextCursor: string | null }>(api.GET('/api/suppressions', { params: { query: { search: search || undefined, cursor: cursor || undefined, limit: 25 } } })),
    [search, cursor],
  );
  const [draft, setDraft] = useState(search);
  const [value, setValue] = useState('');
  const [reason, setReason] = useState('');
  const add = useAction(async () => {
    const v = value.trim();
    await call(api.POST('/api/suppressions', { body: { ...(v.includes('@') ? { email: v } : { phone: v }), reason: reason || undefined } }));
    setValue('');
    setReason('');
    list.reload();
  });
  const remove = useAction(async (v: string) => {
    await call(api.DELETE('/api/suppressions/{value}', { params: { path: { value: v } } }));
    list.reload();
  });
  return (
    <>
      <PageTitle>Suppressions</PageTitle>
      <ActionForm class="inline" role="search" onSubmit={() => navigate(withQuery('/suppressions', { search: draft }))}>
        <label>
          Search
          <input type="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </ActionForm>
      <ActionForm class="inline" aria-label="Add a suppression" onSubmit={() => add.run()}>
        <label>
          Email or phone
          <input required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <label>
          Reason
          <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={add.busy}>
          Add suppression
        </button>
        <ErrorText error={add.error} />
      </ActionForm>
      <ErrorText error={list.error ?? remove.error} />
      <Table columns={['Address', 'Reason', 'Source', 'Since', '']}>
        {list.data?.items.map((s) => {
          const v = s.email ?? s.phone;
          // An erased person's address is gone: the entry keeps refusing it, and nobody can name it to lift it.
          return v ? (
            <tr key={v}>
              <td>{v}</td>
              <td>
                {s.reason}
                {s.detail && (
                  <>
                    <br />
                    <span class="muted">{s.detail}</span>
                  </>
                )}
              </td>
              <td>{s.source}</td>
              <td>{formatTime(s.createdAt)}</td>
              <td>
                <ConfirmButton
                  label="Remove"
                  confirmLabel="Yes, remove"
                  question={s.reason === 'bounced' || s.reason === 'complained' ? `Sends to it go out again; another ${s.reason === 'bounced' ? 'bounce' : 'complaint'} counts against your sending.` : 'Sends to it go out again.'}
                  target={v}
                  busy={remove.busy}
                  onConfirm={() => remove.run(v)}
                />
              </td>
            </tr>
          ) : (
            <tr key={s.person}>
              <td>
                <span class="muted">erased person</span> <code title="the keyed hash of the address">{s.person?.slice(0, 12)}…</code>
              </td>
              <td>{s.reason}</td>
              <td>{s.source}</td>
              <td>{formatTime(s.createdAt)}</td>
              <td />
            </tr>
          );
        })}
      </Table>
      {list.data && list.data.items.length === 0 && <p>Nothing is suppressed{search ? ' that matches' : ''}.</p>}
      <nav class="pager" aria-label="Pages">
        {cursor && <Link href={withQuery('/suppressions', { search })}>First page</Link>}
        {list.data?.nextCursor && <Link href={withQuery('/suppressions', { search, cursor: list.data.nextCursor })}>Next page</Link>}
      </nav>
      <Transfer onDone={list.reload} />
    </>
  );
}
