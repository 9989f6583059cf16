import { api, call } from '../api';
import { useLocation, withQuery } from '../router';
import { Table, ErrorText, Link, PageTitle, formatTime, useLoad } from '../ui';
import type { paths } from '../schema';

type AuditPage = paths['/api/audit']['get']['responses'][200]['content']['application/json'];
type Entry = AuditPage['items'][number];

const ACTOR_TYPES: Record<Entry['actor']['type'], string> = { user: 'user', apiKey: 'API key', system: 'system' };

/** A changed value in words: text as it is, anything else as JSON, nothing as a dash. */
const formatValue = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

export function Audit() {
  const { query } = useLocation();
  const cursor = query.get('cursor') ?? '';
  const list = useLoad(() => call<AuditPage>(api.GET('/api/audit', { params: { query: { cursor: cursor || undefined, limit: 25 } } })), [cursor]);
  return (
    <>
      <PageTitle>Audit trail</PageTitle>
      <ErrorText error={list.error} />
      {list.data && (
        <>
          <Table columns={['When', 'Who', 'From', 'Action', 'Target', 'Changes']}>
            {list.data.items.map((e, i) => (
              <tr key={`${e.at}-${i}`}>
                <td>{formatTime(e.at)}</td>
                <td class="long">
                  {e.actor.type === 'system' ? 'system' : `${e.actor.email ?? e.actor.id} (${ACTOR_TYPES[e.actor.type]})`}
                </td>
                <td>{e.ip ?? '—'}</td>
                <td>{e.action}</td>
                <td class="long">
                  {e.target.type} {e.target.id}
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
          {list.data.items.length === 0 && <p>Nothing has been recorded yet.</p>}
          <nav class="pager" aria-label="Pages">
            {cursor && <Link href="/audit">First page</Link>}
            {list.data.nextCursor && <Link href={withQuery('/audit', { cursor: list.data.nextCursor })}>Next page</Link>}
          </nav>
        </>
      )}
    </>
  );
}
