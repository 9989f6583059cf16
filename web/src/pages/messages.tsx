import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { navigate, useLocation } from '../router';
import type { MessageSummary } from '../types';
import { ActionForm, Table, ErrorText, Link, NotKept, PageTitle, Recipient, Status, formatTime, useLoad } from '../ui';
import { ActivityChart, type Bucket } from './chart';
import { chartQuery, filtersUrl, listQuery, queryString, readFilters } from './message-filters';

const STATUSES = ['scheduled', 'queued', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'cancelled'] as const;

/** The form's text for the metadata filters: `key=value` entries separated by `;`. */
const metadataText = (entries: [string, string][]) => entries.map(([k, v]) => `${k}=${v}`).join('; ');
const parseMetadata = (text: string): [string, string][] =>
  text
    .split(';')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => {
      const i = e.indexOf('=');
      return i < 0 ? [e, ''] : [e.slice(0, i).trim(), e.slice(i + 1).trim()];
    });

export function Messages() {
  const { query } = useLocation();
  const filters = readFilters(query);
  const key = filtersUrl(filters);
  const list = useLoad(
    // the typed query has one `metadata[key]` parameter; the filters carry each key by its own name
    () => call<{ items: MessageSummary[]; nextCursor: string | null }>(api.GET('/api/messages', { params: { query: listQuery(filters) as never }, querySerializer: queryString })),
    [key],
  );
  const chartFilters = chartQuery(filters);
  const chart = useLoad(
    // the interval travels with the counts it was asked for: the axis is labelled by what was drawn
    async () => ({
      interval: chartFilters.interval,
      ...(await call<{ buckets: Bucket[] }>(api.GET('/api/messages/timeseries', { params: { query: chartFilters.query as never }, querySerializer: queryString }))),
    }),
    // not the query itself: without a `to` it ends now, a new instant on every render
    [filtersUrl({ ...filters, search: '', cursor: '' })],
  );

  useEffect(() => {
    // when the list is on screen, relative to the navigation: what the dashboard's bench reads
    if (list.data) performance.mark('messages:list-shown');
  }, [list.data]);

  const formOf = (f: typeof filters) => ({ ...f, tags: f.tags.join(' '), metadata: metadataText(f.metadata) });
  const [draft, setDraft] = useState(formOf(filters));
  // the URL changed (Back, the navigation's link, a shared link): the form shows what the list is filtered by
  useEffect(() => setDraft(formOf(filters)), [key]);
  const apply = () => {
    navigate(filtersUrl({ ...draft, tags: draft.tags.split(/\s+/).filter(Boolean), metadata: parseMetadata(draft.metadata), cursor: '' }));
  };
  return (
    <>
      <PageTitle>Messages</PageTitle>
      <ActionForm class="filters" role="search" aria-label="Filter messages" onSubmit={apply}>
        <label>
          Search
          <input type="search" value={draft.search} placeholder="recipient, sender or subject" size={28} onInput={(e) => setDraft({ ...draft, search: e.currentTarget.value })} />
        </label>
        <label>
          Status
          <select value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value })}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
        </label>
        <label>
          To
          <input type="date" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
        </label>
        <label>
          Tags
          <input value={draft.tags} placeholder="welcome receipt" onInput={(e) => setDraft({ ...draft, tags: e.currentTarget.value })} />
        </label>
        <label>
          Metadata
          <input value={draft.metadata} placeholder="plan=pro; region=eu" onInput={(e) => setDraft({ ...draft, metadata: e.currentTarget.value })} />
        </label>
        <button type="submit">Apply filters</button>
      </ActionForm>

      <section aria-labelledby="activity">
        <h2 id="activity">Activity</h2>
        {chartFilters.notFollowed.length > 0 && (
          <p class="note" id="chart-note">
            The chart is drawn from counts kept per status, tag and metadata entry, so it does not follow {chartFilters.notFollowed.join(' and ')}:{' '}
            {chartFilters.notFollowed.length === 1 ? 'that filter narrows' : 'those filters narrow'} the list only.
          </p>
        )}
        <ErrorText error={chart.error} />
        {chart.data && <ActivityChart buckets={chart.data.buckets} interval={chart.data.interval} />}
      </section>

      <section aria-labelledby="list">
        <h2 id="list">History</h2>
        <ErrorText error={list.error} />
        {list.data && (
          <>
            <Table columns={['Created', 'To', 'Subject', 'Status', 'Opens', 'Clicks']}>
              {list.data.items.map((m) => (
                <tr key={m.id}>
                  <td>{formatTime(m.createdAt)}</td>
                  <td>
                    <Link href={`/messages/${encodeURIComponent(m.id)}`}><Recipient message={m} /></Link>
                  </td>
                  <td>{m.subject ?? (m.channel === 'sms' ? '(SMS)' : <NotKept what="subject" />)}</td>
                  <td>
                    <Status value={m.status} />
                  </td>
                  <td>{m.opens}</td>
                  <td>{m.clicks}</td>
                </tr>
              ))}
            </Table>
            {list.data.items.length === 0 && <p>No messages match.</p>}
            <nav class="pager" aria-label="Pages">
              {filters.cursor && <Link href={filtersUrl({ ...filters, cursor: '' })}>First page</Link>}
              {list.data.nextCursor && <Link href={filtersUrl({ ...filters, cursor: list.data.nextCursor })}>Next page</Link>}
            </nav>
          </>
        )}
      </section>
    </>
  );
}
