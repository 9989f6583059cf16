import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { contactColumns, toContact, withoutDuplicates } from '../csv-contacts';
import { CsvImport, type RefusedEntry } from '../csv-import';
import { navigate, useLocation, withQuery } from '../router';
import type { Contact } from '../types';
import { Table, ActionForm, ErrorText, Link, PageTitle, Status, useLoad } from '../ui';
import { AddContact } from './contact-add';
import { PersonRequests } from './person-requests';

const STATUSES = ['subscribed', 'unsubscribed', 'bounced', 'complained', 'suppressed'] as const;
const BATCH = 500;

function Import({ onDone }: { onDone: () => void }) {
  const [listId, setListId] = useState('');
  type Totals = { created: number; updated: number; unchanged: number; errors?: RefusedEntry[] };
  return (
    <section aria-labelledby="import">
      <h2 id="import">Import from CSV</h2>
      <CsvImport<ReturnType<typeof toContact>, Totals>
        batch={BATCH}
        read={(fields, rows) => {
          const columns = contactColumns(fields);
          return withoutDuplicates(rows.map(({ line, record }) => ({ line, item: toContact(record, columns) })));
        }}
        send={(contacts) => call<Totals>(api.POST('/api/contacts/import', { body: { contacts, listId: listId || undefined } }))}
        summary={(results, sent, refused) => {
          const sum = (k: 'created' | 'updated' | 'unchanged') => results.reduce((n, r) => n + r[k], 0);
          return `Imported ${sent - refused} of ${sent} contacts: ${sum('created')} created, ${sum('updated')} updated, ${sum('unchanged')} unchanged.`;
        }}
        help="A header row names the columns: email, firstName, lastName, company, status, tags and listIds (several separated by ;). Other spellings of them are understood too, such as Email Address, First Name or last_name."
        onDone={onDone}
      >
        <label>
          Add to list
          <input value={listId} onInput={(e) => setListId(e.currentTarget.value)} />
        </label>
      </CsvImport>
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
  // the URL changed (Back, the navigation's link, a shared link): the form shows what the list is filtered by
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
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
          <p>
            {list.data.total} contact{list.data.total === 1 ? '' : 's'}
            {list.data.total === 0 && (Object.values(filters).some((v) => v && v !== '1') ? ' match these filters.' : ': add one below, or import a CSV file from another tool.')}
          </p>
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
      <AddContact onDone={list.reload} />
      <Import onDone={list.reload} />
      <PersonRequests onErased={list.reload} />
    </>
  );
}
