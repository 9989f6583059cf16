import { useState } from 'preact/hooks';
import { api, call } from '../api';
import { ActionForm, ErrorText, useAction } from '../ui';
import { MIN_PASSWORD_LENGTH as MIN_LENGTH } from '../../../src/domain/accounts/password-policy.js';

/** The signed-in user's own password; the server ends every other session and renews this one's cookie. */
export function PasswordForm() {
  const empty = { currentPassword: '', newPassword: '', repeated: '' };
  const [form, setForm] = useState(empty);
  const [changed, setChanged] = useState(false);
  const change = useAction(async () => {
    setChanged(false);
    if (form.newPassword !== form.repeated) throw new Error('The new password and its repetition differ.');
    await call(api.POST('/api/auth/password', { body: { currentPassword: form.currentPassword, newPassword: form.newPassword } }));
    setForm(empty);
    setChanged(true);
  });
  const field = (name: keyof typeof empty, label: string, autocomplete: string) => (
    <label>
      {label}
      <input
        type="password"
        required
        minLength={name === 'currentPassword' ? undefined : MIN_LENGTH}
        autocomplete={autocomplete}
        value={form[name]}
        onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
      />
    </label>
  );
  return (
    <section aria-labelledby="password">
      <h2 id="password">Your password</h2>
      <ActionForm class="stack" onSubmit={() => change.run()}>
        {field('currentPassword', 'Current password', 'current-password')}
        {field('newPassword', 'New password', 'new-password')}
        {field('repeated', 'New password again', 'new-password')}
        <p class="help">At least {MIN_LENGTH} characters. Every other session, in any browser or script, is signed out; API keys keep working.</p>
        <ErrorText error={change.error} />
        {changed && <p role="status">Password changed.</p>}
        <button type="submit" disabled={change.busy}>
          Change password
        </button>
      </ActionForm>
    </section>
  );
}
