import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { navigate, useLocation, withQuery } from '../router';
import type { MessageSummary } from '../types';
import { ActionForm, Table, ErrorText, Link, PageTitle, Status, formatTime, useLoad } from '../ui';
import { ActivityChart, type Bucket } from './chart';

const STATUSES = ['scheduled', 'queued', 'sent', 'delivered', 'bounced', 'complained', 'failed', 'cancelled'] as const;
type MessageStatus = (typeof STATUSES)[number];
const DAY = 86_400_000;

/** A date input's day as the instant it starts (from) or ends (to), in UTC. */
const dayStart = (d: string) => (d ? `${d}T00:00:00.000Z` : undefined);
const dayEnd = (d: string) => (d ? `${d}T23:59:59.999Z` : undefined);

export function Messages() {
  const { query } = useLocation();
  const filters = {
    search: query.get('search') ?? '',
    status: query.get('status') ?? '',
    from: query.get('from') ?? '',
    to: query.get('to') ?? '',
    cursor: query.get('cursor') ?? '',
  };
  const key = JSON.stringify(filters);
  const list = useLoad(
    () =>
      call<{ items: MessageSummary[]; nextCursor: string | null }>(
        api.GET('/api/messages', {
          params: {
            query: {
              search: filters.search || undefined,
              status: (filters.status || undefined) as MessageStatus | undefined,
              from: dayStart(filters.from),
              to: dayEnd(filters.to),
              cursor: filters.cursor || undefined,
              limit: 25,
            },
          },
        }),
      ),
    [key],
  );
  // The chart covers the chosen days (the last 30 without a range), per hour when that is three days or less.
  const to = filters.to ? new Date(dayEnd(filters.to)!) : new Date();
  const from = filters.from ? new Date(dayStart(filters.from)!) : new Date(to.getTime() - 30 * DAY);
  const interval = to.getTime() - from.getTime() <= 3 * DAY ? 'hour' : 'day';
  const chart = useLoad(
    () => call<{ buckets: Bucket[] }>(api.GET('/api/messages/timeseries', { params: { query: { from: from.toISOString(), to: to.toISOString(), interval } } })),
    [filters.from, filters.to],
  );

  useEffect(() => {
    // when the list is on screen, relative to the navigation: what the dashboard's bench reads
    if (list.data) performance.mark('messages:list-shown');
  }, [list.data]);

  const [draft, setDraft] = useState(filters);
  const apply = () => {
    navigate(withQuery('/messages', { ...draft, cursor: undefined }));
  };
  return (
    <>
      <PageTitle>Messages</PageTitle>
      <ActionForm class="filters" role="search" aria-label="Filter messages" onSubmit={apply}>
        <label>
          Search
          <input type="search" value={draft.search} placeholder="recipient, sender or subject" onInput={(e) => setDraft({ ...draft, search: e.currentTarget.value })} />
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
        <button type="submit">Apply filters</button>
      </ActionForm>

      <section aria-labelledby="activity">
        <h2 id="activity">Activity</h2>
        <ErrorText error={chart.error} />
        {chart.data && <ActivityChart buckets={chart.data.buckets} interval={interval} />}
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
                    <Link href={`/messages/${encodeURIComponent(m.id)}`}>{m.to}</Link>
                  </td>
                  <td>{m.subject ?? (m.channel === 'sms' ? '(SMS)' : '')}</td>
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
              {filters.cursor && <Link href={withQuery('/messages', { ...filters, cursor: undefined })}>First page</Link>}
              {list.data.nextCursor && <Link href={withQuery('/messages', { ...filters, cursor: list.data.nextCursor })}>Next page</Link>}
            </nav>
          </>
        )}
      </section>
    </>
  );
}
