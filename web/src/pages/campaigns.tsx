import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { stillChanging } from '../campaign-live';
import { contactByEmail } from '../contact-lookup';
import type { paths } from '../schema';
import type { Template } from '../types';
import { ActionForm, ConfirmButton, EmailFrame, ErrorText, PageTitle, Status, Table, formatTime, useAction, useLoad, useTwoStep } from '../ui';
import { renderTemplate } from '../../../src/domain/email/render.js';
import { recipientVariables, unfilledPlaceholders } from '../../../src/domain/campaigns/recipient-variables.js';
import { campaignActions, type CampaignAction } from '../../../src/domain/campaigns/status.js';

type Campaign = paths['/api/campaigns']['get']['responses'][200]['content']['application/json']['items'][number];
/** The campaign's `stats`: the same answer as the messages aggregate for its id. */
interface Stats {
  total: number;
  status: Record<string, number>;
  opens: { unique: number; total: number };
  clicks: { unique: number; total: number };
}

/** How often the list is read again while a campaign can still change (stillChanging). */
const POLL_MS = 2000;
/** setTimeout's longest delay; a later start is waited for in several steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
const EMPTY = { name: '', templateId: '', fromEmail: '', listId: '', tag: '', allContacts: false };
type TextField = Exclude<keyof typeof EMPTY, 'allContacts'>;

function StatsText({ stats }: { stats: unknown }) {
  const s = stats as Stats | undefined;
  if (!s?.status) return <>—</>;
  const statuses = Object.entries(s.status).filter(([, n]) => n > 0);
  return (
    <>
      {s.total} messages: {statuses.map(([status, n]) => `${n} ${status}`).join(', ') || 'none yet'}; {s.opens.unique} opened, {s.clicks.unique} clicked
    </>
  );
}

/** Whom a campaign goes to, in words: `the contacts of list news`, `… with tag vip`, both, or `all contacts`. */
function audienceText(a: Campaign['audience']): string {
  if (!a.listId && !a.tag) return 'all contacts';
  if (a.listId && a.tag) return `the contacts of list ${a.listId} with tag ${a.tag}`;
  return a.listId ? `the contacts of list ${a.listId}` : `the contacts with tag ${a.tag}`;
}

/**
 * What a send asks before it goes: when and to whom. A time already past is said to be so, as the
 * API starts such a send at once (a datetime-local value is the browser's local time).
 */
function sendQuestion(scheduleAt: string, audience: Campaign['audience']): string {
  const to = audienceText(audience);
  if (!scheduleAt) return `Send now to ${to}?`;
  const at = new Date(scheduleAt);
  if (at.getTime() <= Date.now()) return `${formatTime(at.toISOString())} is in the past: the campaign will start now. Send now to ${to}?`;
  return `Send at ${formatTime(at.toISOString())} to ${to}?`;
}

/**
 * A campaign's row, with the actions its status allows (the decider's own rule). The service still
 * decides: a row read before the campaign moved on (it finished, another tab paused it) shows its
 * refusal in words.
 */
function CampaignRow({ campaign: c, onChanged, onEdit }: { campaign: Campaign; onChanged: () => void; onEdit: (c: Campaign) => void }) {
  const [scheduleAt, setScheduleAt] = useState('');
  const cancel = useTwoStep();
  // a send reaches every contact of the audience at once: asked first, saying to whom and when
  const send = useTwoStep();
  const path = { params: { path: { id: c.id } } };
  const act = useAction(async (kind: Exclude<CampaignAction, 'edit'>) => {
    try {
      if (kind === 'send') {
        // a datetime-local value is the browser's local time: the API takes an instant
        await call(api.POST('/api/campaigns/{id}/send', { ...path, body: scheduleAt ? { scheduledAt: new Date(scheduleAt).toISOString() } : {} }));
        setScheduleAt('');
      } else if (kind === 'pause') await call(api.POST('/api/campaigns/{id}/pause', path));
      else if (kind === 'resume') await call(api.POST('/api/campaigns/{id}/resume', path));
      else if (kind === 'delete') await call(api.DELETE('/api/campaigns/{id}', path));
      else await call(api.POST('/api/campaigns/{id}/cancel', path));
    } finally {
      // a refusal too: it means the row was out of date
      cancel.disarm();
      send.disarm();
      onChanged();
    }
  });
  const { audience, queued, skipped, unfilledPlaceholders } = c.progress;
  const errorId = `campaign-error-${c.id}`;
  const offers = campaignActions(c.status);
  return (
    <tr>
      <td>{c.name}</td>
      <td>
        <Status value={c.status} />
        {c.pausedReason && <> ({c.pausedReason.replaceAll('_', ' ')})</>}
        {c.status === 'scheduled' && <> for {formatTime(c.scheduledAt)}</>}
        {c.status === 'paused' && c.scheduledAt && !c.startedAt && <>, scheduled for {formatTime(c.scheduledAt)}</>}
      </td>
      <td>
        {c.startedAt ? (
          <>
            <progress max={Math.max(audience, 1)} value={audience ? queued + skipped : 0} aria-label={`Progress of ${c.name}`} />
            <br />
            {audience} audience, {queued} queued, {skipped} skipped
            {unfilledPlaceholders > 0 && <>, {unfilledPlaceholders} with empty placeholders</>}
          </>
        ) : (
          // counted when it starts: the contacts of the list or tag (or all of them) then
          <>To {audienceText(c.audience)}</>
        )}
      </td>
      <td>
        <StatsText stats={c.stats} />
      </td>
      <td>
        {offers.includes('send') && (
          <ActionForm class="row" onSubmit={() => (send.armed ? act.run('send') : send.arm())}>
            <label>
              Schedule at<span class="visually-hidden"> {c.name}</span>
              <input
                type="datetime-local"
                step={1}
                value={scheduleAt}
                aria-describedby={errorId}
                onInput={(e) => {
                  setScheduleAt(e.currentTarget.value);
                  send.close();
                }}
              />
            </label>
            {send.armed ? (
              <>
                <span>{sendQuestion(scheduleAt, c.audience)}</span>
                <button type="submit" ref={send.yes} disabled={act.busy} onKeyDown={send.onKeyDown}>
                  Yes, send<span class="visually-hidden"> {c.name}</span>
                </button>
                <button type="button" class="secondary" onKeyDown={send.onKeyDown} onClick={send.disarm}>
                  Back<span class="visually-hidden"> {c.name}</span>
                </button>
              </>
            ) : (
              <button type="submit" ref={send.first} disabled={act.busy}>
                Send<span class="visually-hidden"> {c.name}</span>
              </button>
            )}
          </ActionForm>
        )}
        <div class="row">
          {offers.includes('pause') && (
            <button type="button" class="secondary" disabled={act.busy} onClick={() => act.run('pause')}>
              Pause<span class="visually-hidden"> {c.name}</span>
            </button>
          )}
          {offers.includes('resume') && (
            <button type="button" class="secondary" disabled={act.busy} onClick={() => act.run('resume')}>
              Resume<span class="visually-hidden"> {c.name}</span>
            </button>
          )}
          {offers.includes('edit') && (
            <button type="button" class="secondary" disabled={act.busy} onClick={() => onEdit(c)}>
              Edit<span class="visually-hidden"> {c.name}</span>
            </button>
          )}
          {offers.includes('delete') && <ConfirmButton label="Delete" confirmLabel="Yes, delete" target={c.name} busy={act.busy} onConfirm={() => act.run('delete')} />}
          {!offers.includes('cancel') ? null : cancel.armed ? (
            <>
              <button type="button" class="danger" ref={cancel.yes} disabled={act.busy} onKeyDown={cancel.onKeyDown} onClick={() => act.run('cancel')}>
                Yes, cancel<span class="visually-hidden"> {c.name}</span>
              </button>
              <button type="button" class="secondary" onKeyDown={cancel.onKeyDown} onClick={cancel.disarm}>
                Keep<span class="visually-hidden"> {c.name}</span>
              </button>
            </>
          ) : (
            <button type="button" class="danger" ref={cancel.first} disabled={act.busy} onClick={cancel.arm}>
              Cancel<span class="visually-hidden"> {c.name}</span>
            </button>
          )}
        </div>
        <ErrorText error={act.error} id={errorId} />
      </td>
    </tr>
  );
}

/**
 * What one contact of the audience would receive: the template rendered with that contact's fields by
 * the fan-out's own rules (a field the contact lacks renders empty, and is counted).
 */
function ContactPreview({ template }: { template: Template | undefined }) {
  const [email, setEmail] = useState('');
  const [shown, setShown] = useState<{ subject: string; html: string; text: string; unfilled: number; email: string } | null>(null);
  const preview = useAction(async () => {
    // the last contact's preview goes as soon as another is asked for: left under a refusal, it read as this one's
    setShown(null);
    if (!template) throw new Error('Choose a template first');
    const contact = await contactByEmail(email);
    if (!contact) throw new Error(`No contact ${email}`);
    const variables = recipientVariables({}, { email: contact.email, firstName: contact.firstName, lastName: contact.lastName, company: contact.company });
    setShown({ ...renderTemplate(template, variables), unfilled: unfilledPlaceholders(template, variables), email: contact.email });
  });
  return (
    <section aria-labelledby="campaign-preview" class="preview">
      <h2 id="campaign-preview">Preview for one contact</h2>
      <ActionForm class="inline" onSubmit={() => preview.run()}>
        <label>
          Contact email
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} aria-describedby="campaign-preview-error" />
        </label>
        <button type="submit" disabled={preview.busy}>
          Preview
        </button>
        <ErrorText error={preview.error} id="campaign-preview-error" />
      </ActionForm>
      {shown && (
        <>
          <p>
            To {shown.email}: <strong data-testid="campaign-preview-subject">{shown.subject}</strong>
            {shown.unfilled > 0 && ` (${shown.unfilled} placeholder${shown.unfilled === 1 ? '' : 's'} render empty for this contact)`}
          </p>
          <EmailFrame html={shown.html} title={`Preview of the message to ${shown.email}`} />
        </>
      )}
    </section>
  );
}

export function Campaigns() {
  const list = useLoad(() => call<{ items: Campaign[] }>(api.GET('/api/campaigns')), []);
  const templates = useLoad(() => call<{ items: Template[] }>(api.GET('/api/templates')), []);
  const [form, setForm] = useState(EMPTY);
  /** the campaign the form edits; null: it creates one */
  const [editing, setEditing] = useState<Campaign | null>(null);
  const field = (k: TextField) => ({ value: form[k], onInput: (e: { currentTarget: { value: string } }) => setForm({ ...form, [k]: e.currentTarget.value }) });
  const edit = (c: Campaign) => {
    setEditing(c);
    setForm({ name: c.name, templateId: c.templateId, fromEmail: c.fromEmail, listId: c.audience.listId ?? '', tag: c.audience.tag ?? '', allContacts: !c.audience.listId && !c.audience.tag });
  };
  const stopEditing = () => {
    setEditing(null);
    setForm(EMPTY);
  };
  // the audience is fixed once the fan-out has begun
  const audienceLocked = Boolean(editing?.startedAt);

  const items = list.data?.items ?? [];
  // judged again on every read: a campaign sent long enough ago stops the polling by itself
  const live = items.some((c) => stillChanging(c, Date.now()));
  const { reload } = list;
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [live, reload]);
  // a scheduled campaign is read again once its time has come (and after every read, until it starts)
  useEffect(() => {
    const starts = items.filter((c) => c.status === 'scheduled' && c.scheduledAt).map((c) => Date.parse(c.scheduledAt!));
    if (starts.length === 0) return;
    const timer = setTimeout(reload, Math.min(Math.max(Math.min(...starts) - Date.now(), 0) + POLL_MS, MAX_TIMEOUT_MS));
    return () => clearTimeout(timer);
  }, [list.data, reload]);

  const save = useAction(async () => {
    const audience = form.allContacts ? {} : { ...(form.listId && { listId: form.listId }), ...(form.tag && { tag: form.tag }) };
    // the API takes {} as every contact: left blank by oversight, the filters would send to all of them
    if (!form.allContacts && !audience.listId && !audience.tag && !audienceLocked) throw new Error('Give a list id or a tag, or choose All contacts');
    const body = { name: form.name, templateId: form.templateId, fromEmail: form.fromEmail };
    if (editing) {
      await call(api.PATCH('/api/campaigns/{id}', { params: { path: { id: editing.id } }, body: audienceLocked ? body : { ...body, audience } }));
      setEditing(null);
    } else await call(api.POST('/api/campaigns', { body: { ...body, audience } }));
    setForm(EMPTY);
    list.reload();
  });

  return (
    <>
      <PageTitle>Campaigns</PageTitle>
      {editing && (
        <p role="status">
          Editing <strong>{editing.name}</strong> ({editing.status}){audienceLocked && ': its audience is fixed, as it has started'}.
        </p>
      )}
      <ActionForm class="inline" onSubmit={() => save.run()}>
        <label>
          Name
          <input required {...field('name')} aria-describedby="campaign-create-error" />
        </label>
        <label>
          Template
          <select required {...field('templateId')} aria-describedby="campaign-create-error">
            <option value="">Choose a template</option>
            {templates.data?.items.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          From email
          <input type="email" required {...field('fromEmail')} aria-describedby="campaign-create-error" />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={form.allContacts}
            disabled={audienceLocked}
            onChange={(e) => setForm({ ...form, allContacts: e.currentTarget.checked, listId: '', tag: '' })}
            aria-describedby="campaign-create-error"
          />
          All contacts
        </label>
        <label>
          List id
          <input {...field('listId')} disabled={audienceLocked || form.allContacts} aria-describedby="campaign-create-error" />
        </label>
        <label>
          Tag
          <input {...field('tag')} disabled={audienceLocked || form.allContacts} aria-describedby="campaign-create-error" />
        </label>
        <button type="submit" disabled={save.busy}>
          {editing ? 'Save campaign' : 'Create campaign'}
        </button>
        {editing && (
          <button type="button" class="secondary" onClick={stopEditing}>
            Stop editing
          </button>
        )}
        <ErrorText error={save.error ?? templates.error} id="campaign-create-error" />
      </ActionForm>
      <ContactPreview template={templates.data?.items.find((t) => t.id === form.templateId)} />
      <ErrorText error={list.error} />
      {live && (
        <p role="status" class="visually-hidden">
          Progress and stats update every {POLL_MS / 1000} seconds while a campaign is sending or its messages are on their way.
        </p>
      )}
      {list.data && list.data.items.length === 0 && <p>No campaigns yet.</p>}
      {list.data && list.data.items.length > 0 && (
        <Table columns={['Name', 'Status', 'Progress', 'Stats', '']}>
          {list.data.items.map((c) => (
            <CampaignRow key={c.id} campaign={c} onChanged={list.reload} onEdit={edit} />
          ))}
        </Table>
      )}
    </>
  );
}
