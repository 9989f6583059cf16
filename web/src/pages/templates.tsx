import { useEffect, useMemo, useState } from 'preact/hooks';
import { renderTemplate } from '../../../src/domain/email/render.js';
import { api, call } from '../api';
import { navigate, useLocation, withQuery } from '../router';
import type { Template } from '../types';
import { ActionForm, ConfirmButton, EmailFrame, ErrorText, Link, PageTitle, useAction, useLoad } from '../ui';

const EMPTY = { name: '', subject: '', html: '', text: '' };
const SAMPLE = '{\n  "firstName": "Ada",\n  "company": "Acme"\n}';

/**
 * The saved template sent once to a real inbox, with the preview's sample variables: a send like any
 * other (verified sender, suppressions, the daily cap), tagged `test`.
 */
function SendTest({ id, variables, edited }: { id: string; variables: Record<string, unknown>; edited: boolean }) {
  const [to, setTo] = useState('');
  const [from, setFrom] = useState('');
  const [sent, setSent] = useState<{ to: string; messageLogId: string } | null>(null);
  const send = useAction(async () => {
    setSent(null);
    const r = await call<{ messageLogId: string }>(api.POST('/api/templates/{id}/test', { params: { path: { id } }, body: { to, fromEmail: from, variables } }));
    setSent({ to, messageLogId: r.messageLogId });
  });
  return (
    <section aria-labelledby="send-test">
      <h2 id="send-test">Send a test</h2>
      <ActionForm class="inline" aria-label="Send a test" onSubmit={() => send.run()}>
        <label>
          To
          <input type="email" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <label>
          From
          <input type="email" required value={from} placeholder="an address of a verified domain" size={30} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={send.busy}>
          Send test
        </button>
      </ActionForm>
      <p class="help">
        The saved version is sent{edited ? ' (save your changes first to send them)' : ''}, with the sample variables, as a real message tagged test.
      </p>
      <ErrorText error={send.error} />
      {sent && (
        <p role="status">
          Sent a test to {sent.to}: <Link href={`/messages/${sent.messageLogId}`}>follow the message</Link>.
        </p>
      )}
    </section>
  );
}

/** What a send with these variables would carry: the service's own renderer, so the preview cannot differ. */
function preview(parts: { subject: string; html: string; text: string }, vars: Record<string, unknown>) {
  try {
    return { ...renderTemplate(parts, vars), error: null };
  } catch (e) {
    return { subject: '', html: '', text: '', error: (e as Error).message };
  }
}

export function Templates() {
  const list = useLoad(() => call<{ items: Template[] }>(api.GET('/api/templates')), []);
  const inUrl = useLocation().query.get('template');
  const [selected, setSelected] = useState<string | null>(null);
  const [form, setForm] = useState(EMPTY);
  const [sample, setSample] = useState(SAMPLE);
  const [saved, setSaved] = useState<string | null>(null);

  const vars = useMemo(() => {
    try {
      const v = JSON.parse(sample || '{}');
      return { vars: typeof v === 'object' && v ? (v as Record<string, unknown>) : {}, error: null };
    } catch (e) {
      return { vars: {}, error: `Sample variables are not valid JSON: ${(e as Error).message}` };
    }
  }, [sample]);
  const shown = preview(form, vars.vars);
  const stored = list.data?.items.find((t) => t.id === selected);
  // what the form was opened with (a new template: empty); until a saved template is listed, nothing to compare
  const base = selected ? stored : EMPTY;
  const edited = !!base && (['name', 'subject', 'html', 'text'] as const).some((k) => base[k] !== form[k]);

  /** the template in the editor, named in the URL too: a reload or a shared link opens it again */
  const select = (id: string | null) => {
    setSelected(id);
    navigate(withQuery('/templates', { template: id ?? undefined }), { replace: true });
  };
  const show = (t: Template | null) => {
    select(t?.id ?? null);
    setForm(t ? { name: t.name, subject: t.subject, html: t.html, text: t.text } : EMPTY);
    setSaved(null);
  };
  // the URL names another template than the editor has (a reload, a link, Back): opened once the list
  // is read; one that is no longer there leaves a new template, and the URL says so
  useEffect(() => {
    if (inUrl === selected || (inUrl && !list.data)) return;
    show(list.data?.items.find((t) => t.id === inUrl) ?? null);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [inUrl, list.data]);
  /** Another template (or a new one) in the editor: changes not saved are dropped only when the person says so. */
  const open = (t: Template | null) => {
    if (edited && !window.confirm(`Discard your unsaved changes to ${stored ? `template ${stored.name}` : 'the new template'}?`)) return;
    show(t);
  };
  const save = useAction(async () => {
    setSaved(null);
    const t = selected
      ? await call<Template>(api.PUT('/api/templates/{id}', { params: { path: { id: selected } }, body: form }))
      : await call<Template>(api.POST('/api/templates', { body: form }));
    select(t.id);
    setSaved(`Saved template ${t.name} (${t.id}).`);
    list.reload();
  });
  const remove = useAction(async () => {
    await call(api.DELETE('/api/templates/{id}', { params: { path: { id: selected! } } }));
    show(null);
    list.reload();
  });
  const field = (k: keyof typeof EMPTY) => ({ value: form[k], onInput: (e: { currentTarget: { value: string } }) => setForm({ ...form, [k]: e.currentTarget.value }) });

  return (
    <>
      <PageTitle>Templates</PageTitle>
      <div class="columns">
        <nav aria-label="Templates" class="side">
          <ErrorText error={list.error} />
          <ul class="plain">
            <li>
              <button type="button" class="secondary" onClick={() => open(null)}>
                New template
              </button>
            </li>
            {list.data?.items.map((t) => (
              <li key={t.id}>
                <button type="button" class="link" aria-current={selected === t.id ? 'true' : undefined} onClick={() => open(t)}>
                  {t.name}
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <ActionForm class="stack editor" aria-label="Template" onSubmit={() => save.run()}>
          <label>
            Name
            <input required {...field('name')} />
          </label>
          <label>
            Subject
            <input required {...field('subject')} />
          </label>
          <label>
            HTML
            <textarea rows={8} {...field('html')} />
          </label>
          <label>
            Text
            <textarea rows={4} {...field('text')} />
          </label>
          <label>
            Sample variables
            <textarea rows={4} value={sample} onInput={(e) => setSample(e.currentTarget.value)} aria-describedby="sample-error" />
          </label>
          <ErrorText error={vars.error} id="sample-error" />
          <ErrorText error={save.error ?? remove.error} />
          {saved && <p role="status">{saved}</p>}
          <div class="row">
            <button type="submit" disabled={save.busy}>
              {selected ? 'Save' : 'Create template'}
            </button>
            {selected && (
              <ConfirmButton
                // asked about this template only: opening another closes the question
                key={selected}
                label="Delete template"
                confirmLabel="Yes, delete"
                question="Campaigns using it will pause."
                target={form.name}
                busy={remove.busy}
                onConfirm={() => remove.run()}
              />
            )}
          </div>
        </ActionForm>
        <section aria-labelledby="preview" class="preview">
          <h2 id="preview">Preview</h2>
          <ErrorText error={shown.error} />
          <p>
            Subject: <strong data-testid="preview-subject">{shown.subject}</strong>
          </p>
          <EmailFrame html={shown.html} title="Preview of the HTML" />
          <h3>Text</h3>
          <pre class="wrap" data-testid="preview-text">
            {shown.text}
          </pre>
          {selected && <SendTest id={selected} variables={vars.vars} edited={edited} />}
        </section>
      </div>
    </>
  );
}
