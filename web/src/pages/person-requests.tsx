import { useState } from 'preact/hooks';
import { api, call } from '../api';
import { ActionForm, ConfirmButton, ErrorText, saveFile, useAction } from '../ui';

/**
 * A person's requests about their data, for any address (a contact or only a recipient): see
 * everything kept about them, or be forgotten. Both are in the audit trail.
 */
export function PersonRequests({ onErased }: { onErased: () => void }) {
  const [email, setEmail] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const path = { params: { path: { email: email.trim() } } };
  const exportData = useAction(async () => {
    setDone(null);
    const data = await call<{ messages: unknown[] }>(api.POST('/api/contacts/{email}/export', path));
    saveFile(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }), `personal-data-${email.trim()}.json`);
    setDone(`Exported what is kept about ${email.trim()}: ${data.messages.length} message${data.messages.length === 1 ? '' : 's'}.`);
  });
  const erase = useAction(async () => {
    setDone(null);
    await call(api.DELETE('/api/contacts/{email}', { ...path, params: { ...path.params, query: { erase: 'true' } } }));
    setDone(`${email.trim()} is forgotten: their address, names and message contents can no longer be read.`);
    onErased();
  });
  return (
    <section aria-labelledby="person-requests">
      <h2 id="person-requests">A person's data</h2>
      <p class="help">When someone asks to see what is kept about them, or to be forgotten: by email address (contact or not), or by the number SMS went to.</p>
      <ActionForm class="inline" onSubmit={() => exportData.run()}>
        <label>
          Their address or phone number
          <input required value={email} placeholder="ada@example.org or +14155550100" size={32} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={exportData.busy}>
          Export their data
        </button>
        {email.trim() && (
          <ConfirmButton
            // asked about this address only: another typed closes the question
            key={email.trim()}
            label="Erase"
            confirmLabel="Yes, erase for good"
            question="Their data cannot be read again, by anyone."
            target={email.trim()}
            busy={erase.busy}
            onConfirm={() => erase.run()}
          />
        )}
      </ActionForm>
      <ErrorText error={exportData.error ?? erase.error} />
      {done && <p role="status">{done}</p>}
    </section>
  );
}
