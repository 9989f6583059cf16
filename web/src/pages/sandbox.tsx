import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, call } from '../api';
import { AttachmentList, Table, EmailFrame, ErrorText, PageTitle, formatTime, useLoad } from '../ui';

type RecordedEmail = {
  messageId: string;
  from: string;
  to: string;
  replyTo: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: { name: string; value: string }[];
  createdAt: string;
  attachments: { position: number; filename: string; contentType: string; size: number }[];
};
type RecordedSms = { messageId: string; to: string; from: string; body: string; createdAt: string };

function Email({ email }: { email: RecordedEmail }) {
  return (
    <article class="card" aria-labelledby={`email-${email.messageId}`}>
      <h3 id={`email-${email.messageId}`}>{email.subject}</h3>
      <dl class="facts">
        <dt>From</dt>
        <dd>{email.from}</dd>
        <dt>To</dt>
        <dd>{email.to}</dd>
        {email.replyTo && (
          <>
            <dt>Reply-To</dt>
            <dd>{email.replyTo}</dd>
          </>
        )}
        <dt>Recorded</dt>
        <dd>{formatTime(email.createdAt)}</dd>
        <dt>Subject</dt>
        <dd>{email.subject}</dd>
        {email.headers.map((h, i) => (
          <Fragment key={i}>
            <dt>{h.name}</dt>
            <dd>{h.value}</dd>
          </Fragment>
        ))}
      </dl>
      {email.html && <EmailFrame html={email.html} title={`Body of ${email.subject}`} />}
      {email.text && (
        <details open={!email.html}>
          <summary>
            Text version<span class="visually-hidden"> of {email.subject}</span>
          </summary>
          <pre class="wrap">{email.text}</pre>
        </details>
      )}
      {email.attachments.length > 0 && (
        <>
          <h4>Attachments</h4>
          <AttachmentList attachments={email.attachments} sandboxMessageId={email.messageId} />
        </>
      )}
    </article>
  );
}

function EmailList({ emails, selected, onSelect }: { emails: RecordedEmail[]; selected?: string; onSelect: (id: string) => void }) {
  return (
    <Table columns={['Recorded', 'To', 'Subject', '']}>
      {emails.map((e) => (
        <tr key={e.messageId} aria-current={e.messageId === selected ? 'true' : undefined}>
          <td>{formatTime(e.createdAt)}</td>
          <td>{e.to}</td>
          <td>{e.subject}</td>
          <td>
            <button type="button" class="secondary" onClick={() => onSelect(e.messageId)}>
              View<span class="visually-hidden"> {e.subject} to {e.to}</span>
            </button>
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** How many of each the page lists: the API answers the newest, with no way to page further. */
const LIMIT = 50;

/** Said when a list is full: what is shown is the newest only, not all there is. */
function NewestOnly({ items, what }: { items: unknown[]; what: string }) {
  return items.length < LIMIT ? null : (
    <p class="note">
      The {LIMIT} newest {what} are shown; older ones are not listed.
    </p>
  );
}

export function Sandbox() {
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const emails = useLoad(() => call<{ items: RecordedEmail[] }>(api.GET('/api/sandbox/emails', { params: { query: { limit: LIMIT } } })), []);
  const sms = useLoad(() => call<{ items: RecordedSms[] }>(api.GET('/api/sandbox/sms', { params: { query: { limit: LIMIT } } })), []);
  return (
    <>
      <PageTitle>Sandbox</PageTitle>
      <p>What the sandbox providers recorded instead of delivering, newest first.</p>
      <section aria-labelledby="emails">
        <h2 id="emails">Emails</h2>
        <ErrorText error={emails.error} />
        {emails.data && emails.data.items.length === 0 && <p>No emails recorded.</p>}
        {emails.data && <NewestOnly items={emails.data.items} what="emails" />}
        {emails.data && emails.data.items.length > 0 && (
          <div class="columns">
            <EmailList emails={emails.data.items} selected={selected ?? emails.data.items[0].messageId} onSelect={setSelected} />
            <Email key={selected} email={emails.data.items.find((e) => e.messageId === selected) ?? emails.data.items[0]} />
          </div>
        )}
      </section>
      <section aria-labelledby="sms">
        <h2 id="sms">SMS</h2>
        <ErrorText error={sms.error} />
        {sms.data && sms.data.items.length === 0 && <p>No SMS recorded.</p>}
        {sms.data && <NewestOnly items={sms.data.items} what="SMS" />}
        {sms.data && sms.data.items.length > 0 && (
          <Table columns={['Recorded', 'From', 'To', 'Body']}>
            {sms.data.items.map((s) => (
              <tr key={s.messageId}>
                <td>{formatTime(s.createdAt)}</td>
                <td>{s.from}</td>
                <td>{s.to}</td>
                <td>{s.body}</td>
              </tr>
            ))}
          </Table>
        )}
      </section>
    </>
  );
}
