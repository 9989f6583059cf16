import { Fragment } from 'preact';
import { api, call } from '../api';
import type { ApiKey, HistoryEvent, MessageDetail as Message } from '../types';
import { AttachmentList, Table, EmailFrame, ErrorText, Link, NotKept, PageTitle, Recipient, Status, formatTime, useLoad } from '../ui';

export function MessageDetail({ params }: { params: string[] }) {
  const id = decodeURIComponent(params[0]);
  const message = useLoad(() => call<Message>(api.GET('/api/messages/{id}', { params: { path: { id } } })), [id]);
  const history = useLoad(() => call<HistoryEvent[]>(api.GET('/api/messages/{id}/history', { params: { path: { id } } })), [id]);
  // the key's name says more than its id (a revoked key is listed too)
  const keys = useLoad(() => call<{ items: ApiKey[] }>(api.GET('/api/api-keys')), []);
  const m = message.data;
  const keyName = keys.data?.items.find((k) => k.id === m?.apiKeyId)?.name;
  // The body as handed to the provider is on the message's first event.
  const queued = history.data?.find((e) => e.type === 'EmailQueued' || e.type === 'SmsQueued')?.data as
    | { html?: string | null; text?: string | null; body?: string; headers?: { name: string; value: string }[]; replyTo?: string | null }
    | undefined;
  return (
    <>
      <p>
        <Link href="/messages">← All messages</Link>
      </p>
      <PageTitle>{!m ? 'Message' : m.channel === 'sms' ? `SMS to ${m.to ?? '(number no longer kept)'}` : (m.subject ?? '(subject no longer kept)')}</PageTitle>
      <ErrorText error={message.error} />
      {m && (
        <section aria-labelledby="headers">
          <h2 id="headers">Headers</h2>
          <dl class="facts">
            <dt>Message ID</dt>
            <dd>{m.id}</dd>
            <dt>From</dt>
            <dd>{m.from}</dd>
            <dt>To</dt>
            <dd>
              <Recipient message={m} />
            </dd>
            {queued?.replyTo && (
              <>
                <dt>Reply-To</dt>
                <dd>{queued.replyTo}</dd>
              </>
            )}
            <dt>Subject</dt>
            <dd>{m.subject ?? (m.channel === 'sms' ? '—' : <NotKept what="subject" />)}</dd>
            <dt>Status</dt>
            <dd>
              <Status value={m.status} />
            </dd>
            <dt>Provider</dt>
            <dd>
              {m.provider}
              {m.providerMessageId ? ` (${m.providerMessageId})` : ''}
            </dd>
            <dt>Sent by</dt>
            <dd>{m.campaign ? <>campaign <Link href="/campaigns">{m.campaign.name}</Link></> : m.apiKeyId ? `API key ${keyName ? `${keyName} (${m.apiKeyId})` : m.apiKeyId}` : 'the dashboard'}</dd>
            {m.contact && (
              <>
                <dt>Contact</dt>
                <dd>
                  <Link href={`/contacts?search=${encodeURIComponent(m.contact.email)}`}>{m.contact.email}</Link> ({m.contact.status})
                </dd>
              </>
            )}
            {m.sendAt && (
              <>
                <dt>Scheduled for</dt>
                <dd>{formatTime(m.sendAt)}</dd>
              </>
            )}
            {m.tags.length > 0 && (
              <>
                <dt>Tags</dt>
                <dd>{m.tags.join(', ')}</dd>
              </>
            )}
            {Object.keys(m.metadata).length > 0 && (
              <>
                <dt>Metadata</dt>
                <dd>
                  <ul class="plain">
                    {Object.entries(m.metadata).map(([k, v]) => (
                      <li key={k}>
                        {k} = {v}
                      </li>
                    ))}
                  </ul>
                </dd>
              </>
            )}
            {m.attachments && m.attachments.length > 0 && (
              <>
                <dt>Attachments</dt>
                <dd>
                  {/* only the sandbox keeps the bytes after the send, for its own page */}
                  <AttachmentList attachments={m.attachments} sandboxMessageId={m.provider === 'sandbox' && m.providerMessageId ? m.id : undefined} />
                </dd>
              </>
            )}
            <dt>Opens / clicks</dt>
            <dd>
              {m.opens} / {m.clicks}
            </dd>
            {m.error && (
              <>
                <dt>Error</dt>
                <dd>{m.error}</dd>
              </>
            )}
            {queued?.headers?.map((h, i) => (
              <Fragment key={i}>
                <dt>{h.name}</dt>
                <dd>{h.value}</dd>
              </Fragment>
            ))}
          </dl>
        </section>
      )}
      {queued && (
        <section aria-labelledby="body">
          <h2 id="body">Body</h2>
          {queued.html ? <EmailFrame html={queued.html} title="Message body (HTML)" /> : null}
          {queued.text && (
            <details open={!queued.html}>
              <summary>Text version</summary>
              <pre class="wrap">{queued.text}</pre>
            </details>
          )}
          {queued.body && <pre class="wrap">{queued.body}</pre>}
          {!queued.html && !queued.text && !queued.body && (
            <p>
              <NotKept what="body" />
            </p>
          )}
        </section>
      )}
      {m && (
        <section aria-labelledby="timeline">
          <h2 id="timeline">Timeline</h2>
          {m.events.length === 0 ? (
            <p>Nothing has happened to this message yet.</p>
          ) : (
            <ol class="timeline">
              {m.events.map((e, i) => (
                <li key={i}>
                  <Status value={e.type} />
                  {/* flagged when recorded (a link scanner, a prefetch): listed, but not counted in Opens / clicks */}
                  {e.data.suspectedBot === true && <span class="muted"> (suspected bot, not counted)</span>}{' '}
                  <time dateTime={e.occurredAt}>{formatTime(e.occurredAt)}</time>
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
      {/* shown with the message: for no such message its history fails with the same words, which the page says once */}
      {m && (
        <section aria-labelledby="history">
          <h2 id="history">Event history</h2>
          <ErrorText error={history.error} />
          {history.data && (
            <Table columns={['#', 'Event', 'When', 'Actor', 'Caused by', 'Data']}>
              {history.data.map((e) => (
                <tr key={e.version}>
                  <td>{e.version}</td>
                  <td>{e.type}</td>
                  <td>{formatTime(e.occurredAt)}</td>
                  <td>{e.actor ?? 'unknown'}</td>
                  <td>{String(e.metadata.causationId ?? '—')}</td>
                  <td>
                    <details>
                      <summary>
                        Data<span class="visually-hidden"> of event {e.version}</span>
                      </summary>
                      <pre class="wrap">{JSON.stringify({ data: e.data, metadata: e.metadata }, null, 2)}</pre>
                    </details>
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </section>
      )}
    </>
  );
}
