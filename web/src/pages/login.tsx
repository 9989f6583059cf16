import { useState } from 'preact/hooks';
import { api, call, SESSION_ENDED_KEY } from '../api';
import { navigate } from '../router';
import { ActionForm, ErrorText, PageTitle, useAction } from '../ui';

/** Only a path of this site: a `next` naming another origin would make the login page an open redirect. */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/messages';
}

/** What the server said when it ended the last session (shown once), or null. */
function endedSession(): string | null {
  const reason = sessionStorage.getItem(SESSION_ENDED_KEY);
  sessionStorage.removeItem(SESSION_ENDED_KEY);
  return reason && reason[0].toUpperCase() + reason.slice(1) + '.';
}

export function Login() {
  const [ended] = useState(endedSession);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useAction(async () => {
    await call(api.POST('/api/auth/session', { body: { email, password } }));
    navigate(nextPath(), { replace: true });
  });
  return (
    <main id="main" class="login">
      <PageTitle>Sign in</PageTitle>
      {ended && <p role="status">{ended}</p>}
      <ActionForm onSubmit={() => signIn.run()}>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <ErrorText error={signIn.error} />
        <button type="submit" disabled={signIn.busy}>
          Sign in
        </button>
      </ActionForm>
      <p class="help">
        Lost the password? Whoever runs the server prints a new one with
        <br />
        <code>npm run admin -- reset-password &lt;email&gt;</code>
      </p>
    </main>
  );
}
