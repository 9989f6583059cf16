import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { navigate, useLocation, withQuery } from '../router';
import { Table, ActionForm, ErrorText, Link, PageTitle, formatTime, useLoad } from '../ui';
import type { paths } from '../schema';

type AuditPage = paths['/api/audit']['get']['responses'][200]['content']['application/json'];
type Entry = AuditPage['items'][number];

const ACTOR_TYPES: Record<Entry['actor']['type'], string> = { user: 'user', apiKey: 'API key', system: 'system' };

/** A changed value in words: text as it is, anything else as JSON, nothing as a dash. */
const formatValue = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** The trail's filters as the URL holds them: action, actor and target ids, and days (YYYY-MM-DD) of the browser's time zone. */
const FILTERS = ['action', 'actor', 'target', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/**
 * A day's first instant (from), or the next day's (to: the day given is included), at midnight in
 * the browser's time zone: the zone the trail's times are shown in.
 */
const dayStart = (day: string, next = false) => {
  if (!day) return undefined;
  const [y, m, d] = day.split('-').map(Number);
  const at = new Date(y, m - 1, d + (next ? 1 : 0));
  // not a day (a URL edited by hand): passed on as it is, for the API to refuse in words
  return Number.isNaN(at.getTime()) ? day : at.toISOString();
};

export function Audit() {
  const { query } = useLocation();
  const cursor = query.get('cursor') ?? '';
  const filters = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ''])) as Filters;
  const list = useLoad(
    () =>
      call<AuditPage>(
        api.GET('/api/audit', {
          params: {
            query: {
              cursor: cursor || undefined,
              limit: 25,
              action: filters.action || undefined,
              actor: filters.actor || undefined,
              target: filters.target || undefined,
              from: dayStart(filters.from),
              to: dayStart(filters.to, true),
            },
          },
        }),
      ),
    [cursor, JSON.stringify(filters)],
  );
  const [draft, setDraft] = useState(filters);
  // a link in the table narrows the URL: the form shows what the list is filtered by
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
  const field = (name: keyof Filters) => ({ value: draft[name], onInput: (e: { currentTarget: HTMLInputElement }) => setDraft({ ...draft, [name]: e.currentTarget.value.trim() }) });
  /** this page narrowed to one more thing, from the first page */
  const narrowed = (more: Partial<Filters>) => withQuery('/audit', { ...filters, ...more });
  const filtered = FILTERS.some((f) => filters[f]);
  return (
    <>
      <PageTitle>Audit trail</PageTitle>
      <ActionForm class="filters" role="search" aria-label="Filter the audit trail" onSubmit={() => navigate(withQuery('/audit', draft))}>
        <label>
          Action
          <input {...field('action')} placeholder="webhook.* or api_key.revoked" size={26} />
        </label>
        <label>
          Who
          <input {...field('actor')} placeholder="a user's or key's id" />
        </label>
        <label>
          Target
          <input {...field('target')} placeholder="an id" />
        </label>
        <label>
          From
          <input type="date" {...field('from')} />
        </label>
        <label>
          To
          <input type="date" {...field('to')} />
        </label>
        <button type="submit">Apply filters</button>
        {filtered && <Link href="/audit">Clear filters</Link>}
      </ActionForm>
      <ErrorText error={list.error} />
      {list.data && (
        <>
          <Table columns={['When', 'Who', 'From', 'Action', 'Target', 'Changes']}>
            {list.data.items.map((e, i) => (
              <tr key={`${e.at}-${i}`}>
                <td>{formatTime(e.at)}</td>
                <td>
                  <Link href={narrowed({ actor: e.actor.id })} title="Only what they did">
                    {e.actor.type === 'system' ? 'system' : `${e.actor.email ?? e.actor.id} (${ACTOR_TYPES[e.actor.type]})`}
                  </Link>
                </td>
                <td>{e.ip ?? '—'}</td>
                <td>{e.action}</td>
                <td class="long">
                  {e.target.type}{' '}
                  <Link href={narrowed({ target: e.target.id })} title={`Only what was done to this ${e.target.type}`}>
                    {e.target.id}
                  </Link>
                </td>
                <td class="long">
                  <ul class="changes">
                    {Object.entries(e.changes).map(([field, c]) => (
                      <li key={field}>
                        {field}: {formatValue(c.from)} → {formatValue(c.to)}
                      </li>
                    ))}
                  </ul>
                </td>
              </tr>
            ))}
          </Table>
          {list.data.items.length === 0 && <p>{filtered ? 'Nothing recorded matches these filters.' : 'Nothing has been recorded yet.'}</p>}
          <nav class="pager" aria-label="Pages">
            {cursor && <Link href={narrowed({})}>First page</Link>}
            {list.data.nextCursor && <Link href={withQuery('/audit', { ...filters, cursor: list.data.nextCursor })}>Next page</Link>}
          </nav>
        </>
      )}
    </>
  );
}
