import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { ActionForm, ErrorText, PageTitle, useAction, useLoad } from '../ui';

type AccountSettings = { dailySendCap: number; emailProvider: 'ses' | 'postmark' | 'sandbox'; tracking: 'service' | 'provider' | 'none' };

export function Settings() {
  const current = useLoad(() => call<AccountSettings>(api.GET('/api/settings')), []);
  const [form, setForm] = useState<AccountSettings | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => setForm(current.data ?? null), [current.data]);
  const save = useAction(async () => {
    setSaved(false);
    current.setData(await call<AccountSettings>(api.PATCH('/api/settings', { body: form! })));
    setSaved(true);
  });
  return (
    <>
      <PageTitle>Settings</PageTitle>
      <ErrorText error={current.error} />
      {form && (
        <ActionForm class="stack" onSubmit={() => save.run()}>
          <label>
            Email provider
            <select value={form.emailProvider} onChange={(e) => setForm({ ...form, emailProvider: e.currentTarget.value as AccountSettings['emailProvider'] })}>
              <option value="ses">Amazon SES</option>
              <option value="postmark">Postmark</option>
              <option value="sandbox">Sandbox (records, never delivers)</option>
            </select>
          </label>
          <label>
            Tracking
            <select value={form.tracking} onChange={(e) => setForm({ ...form, tracking: e.currentTarget.value as AccountSettings['tracking'] })}>
              <option value="service">This service rewrites links and adds a pixel</option>
              <option value="provider">The provider tracks</option>
              <option value="none">No tracking</option>
            </select>
          </label>
          <label>
            Daily send cap
            <input type="number" min={1} required value={form.dailySendCap} onInput={(e) => setForm({ ...form, dailySendCap: Number(e.currentTarget.value) })} />
          </label>
          <ErrorText error={save.error} />
          {saved && <p role="status">Saved.</p>}
          <button type="submit" disabled={save.busy}>
            Save
          </button>
        </ActionForm>
      )}
    </>
  );
}
