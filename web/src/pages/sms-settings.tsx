import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api';
import { ActionForm, ErrorText, PageTitle, useAction, useLoad } from '../ui';
import { ProviderWarning, useProviderReadiness } from './provider-readiness';

type SmsSettingsForm = { enabled: boolean; originationNumber: string; sandbox: boolean; sandboxDestinations: string };
type SmsSettingsBody = { enabled: boolean; originationNumber: string | null; sandbox: boolean; sandboxDestinations: string[] };

const toForm = (s: SmsSettingsBody): SmsSettingsForm => ({ ...s, originationNumber: s.originationNumber ?? '', sandboxDestinations: s.sandboxDestinations.join(', ') });

export function SmsSettings() {
  const current = useLoad(() => call<SmsSettingsBody>(api.GET('/api/settings/sms')), []);
  const providers = useProviderReadiness();
  const [form, setForm] = useState<SmsSettingsForm | null>(null);
  const [saved, setSaved] = useState(false);
  const [sync, setSync] = useState<{ synced: number; total: number } | null>(null);
  useEffect(() => setForm(current.data ? toForm(current.data) : null), [current.data]);
  const save = useAction(async () => {
    setSaved(false);
    const body = {
      enabled: form!.enabled,
      sandbox: form!.sandbox,
      originationNumber: form!.originationNumber.trim() || null,
      sandboxDestinations: form!.sandboxDestinations.split(/[\s,]+/).filter(Boolean),
    };
    current.setData(await call<SmsSettingsBody>(api.PUT('/api/settings/sms', { body })));
    setSaved(true);
  });
  const syncNow = useAction(async () => {
    setSync(await call<{ synced: number; total: number }>(api.POST('/api/sms/sync-optouts')));
  });
  return (
    <>
      <PageTitle>SMS settings</PageTitle>
      <ErrorText error={current.error} />
      {form && (
        <ActionForm class="stack" onSubmit={() => save.run()}>
          <label class="check">
            <input type="checkbox" checked={form.enabled} onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })} /> Enabled
          </label>
          <ProviderWarning problem={providers?.sms.problem} what={`SMS through ${providers?.sms.provider.toUpperCase()}`} />
          <label>
            Origination number
            <input value={form.originationNumber} placeholder="+14155550100" onInput={(e) => setForm({ ...form, originationNumber: e.currentTarget.value })} />
          </label>
          <label class="check">
            <input type="checkbox" checked={form.sandbox} onChange={(e) => setForm({ ...form, sandbox: e.currentTarget.checked })} /> Sandbox
          </label>
          <label>
            Sandbox destinations
            <input
              value={form.sandboxDestinations}
              placeholder="+14155550101, +14155550102"
              size={28}
              aria-describedby="destinations-help"
              onInput={(e) => setForm({ ...form, sandboxDestinations: e.currentTarget.value })}
            />
          </label>
          <p id="destinations-help" class="help">
            In sandbox, only these numbers (separated by commas or spaces) receive messages.
          </p>
          <ErrorText error={save.error} />
          {saved && <p role="status">Saved.</p>}
          <button type="submit" disabled={save.busy}>
            Save
          </button>
        </ActionForm>
      )}
      <section aria-labelledby="optouts">
        <h2 id="optouts">Opt-outs</h2>
        <p>Numbers that replied STOP are moved onto the suppression list every 15 minutes; sync them now:</p>
        <button type="button" onClick={() => syncNow.run()} disabled={syncNow.busy}>
          Sync opt-outs now
        </button>
        <ErrorText error={syncNow.error} />
        {sync && (
          <p role="status" class="answer">
            {sync.synced} synced, {sync.total} total
          </p>
        )}
      </section>
    </>
  );
}
