import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { ActionForm, ErrorText, PageTitle, useAction, useLoad } from '../ui';
import { PasswordForm } from './password';
import { ProviderWarning, useProviderReadiness } from './provider-readiness';

type AccountSettings = {
  dailySendCap: number;
  emailProvider: 'ses' | 'postmark' | 'sandbox';
  tracking: 'service' | 'provider' | 'none';
  providerRatePerSecond: number | null;
  retentionDays?: number | null;
};
/** The two settings an empty box leaves unset (no limit, kept) are edited as text. */
type SettingsForm = Omit<AccountSettings, 'providerRatePerSecond' | 'retentionDays'> & { providerRatePerSecond: string; retentionDays: string };

const toForm = (s: AccountSettings): SettingsForm => ({
  ...s,
  providerRatePerSecond: s.providerRatePerSecond === null ? '' : String(s.providerRatePerSecond),
  retentionDays: s.retentionDays ? String(s.retentionDays) : '',
});
const unsetWhenEmpty = (text: string) => (text.trim() === '' ? null : Number(text));

export function Settings() {
  const current = useLoad(() => call<AccountSettings>(api.GET('/api/settings')), []);
  const providers = useProviderReadiness();
  const [form, setForm] = useState<SettingsForm | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => setForm(current.data ? toForm(current.data) : null), [current.data]);
  const save = useAction(async () => {
    setSaved(false);
    const body = { ...form!, providerRatePerSecond: unsetWhenEmpty(form!.providerRatePerSecond), retentionDays: unsetWhenEmpty(form!.retentionDays) };
    current.setData(await call<AccountSettings>(api.PATCH('/api/settings', { body })));
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
          <ProviderWarning problem={providers?.email[form.emailProvider].problem} what="Email through this provider" />
          <label>
            Tracking
            <select value={form.tracking} onChange={(e) => setForm({ ...form, tracking: e.currentTarget.value as AccountSettings['tracking'] })}>
              <option value="service">This service rewrites links and adds a pixel</option>
              <option value="provider">SES or Postmark tracks</option>
              <option value="none">No tracking</option>
            </select>
          </label>
          <label>
            Daily send cap
            <input type="number" min={1} required value={form.dailySendCap} onInput={(e) => setForm({ ...form, dailySendCap: Number(e.currentTarget.value) })} />
          </label>
          <label>
            Sends per second at most
            <input
              type="number"
              // any positive number: 0 passes the browser and the API answers it (no HTML bound says "above 0")
              min={0}
              step="any"
              value={form.providerRatePerSecond}
              aria-describedby="rate-help"
              onInput={(e) => setForm({ ...form, providerRatePerSecond: e.currentTarget.value })}
            />
          </label>
          <p id="rate-help" class="help">
            The most messages handed to the provider a second, across every worker; transactional mail goes first. Any number above 0: below 1 it is one message
            every so many seconds (0.005: one every 200 seconds). Empty: no limit. A new SES account may send 1 to 14 a second.
          </p>
          <label>
            Keep message content for (days)
            <input
              type="number"
              min={1}
              step={1}
              value={form.retentionDays}
              aria-describedby="retention-help"
              onInput={(e) => setForm({ ...form, retentionDays: e.currentTarget.value })}
            />
          </label>
          <p id="retention-help" class="help">
            After that many days a message's body, subject and recipient become unreadable; its status and counts stay. Empty: kept until the
            person is erased.
          </p>
          <ErrorText error={save.error} />
          {saved && <p role="status">Saved.</p>}
          <button type="submit" disabled={save.busy}>
            Save
          </button>
        </ActionForm>
      )}
      <PasswordForm />
    </>
  );
}
