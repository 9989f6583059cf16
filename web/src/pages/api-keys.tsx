import { useState } from 'preact/hooks';
import { api, call } from '../api';
import type { ApiKey } from '../types';
import { Table, ActionForm, ConfirmButton, CopyButton, ErrorText, PageTitle, formatTime, useAction, useLoad } from '../ui';

const SCOPES = ['send', 'sms:send', 'read_events', 'contacts:read', 'contacts:write'] as const;
type Scope = (typeof SCOPES)[number];

/** The controls a key was created with, which its secret alone does not show: where it may be used from, how much a day. */
function limitsOf(apiKey: ApiKey): string {
  const limits = [apiKey.ipAllowlist?.length ? `from ${apiKey.ipAllowlist.join(', ')}` : null, apiKey.dailyLimit ? `${apiKey.dailyLimit} sends a day` : null];
  return limits.filter(Boolean).join('; ') || '—';
}

function KeyRow({ apiKey, onRevoked }: { apiKey: ApiKey; onRevoked: () => void }) {
  const revoke = useAction(async () => {
    await call(api.DELETE('/api/api-keys/{id}', { params: { path: { id: apiKey.id } } }));
    onRevoked();
  });
  return (
    <tr>
      <td>{apiKey.name}</td>
      <td>{apiKey.scopes.join(', ')}</td>
      <td>{formatTime(apiKey.createdAt)}</td>
      <td>{apiKey.lastUsedAt ? formatTime(apiKey.lastUsedAt) : 'never'}</td>
      <td>{apiKey.expiresAt ? formatTime(apiKey.expiresAt) : '—'}</td>
      <td>{limitsOf(apiKey)}</td>
      <td>
        {apiKey.revokedAt ? (
          `revoked ${formatTime(apiKey.revokedAt)}`
        ) : (
          <ConfirmButton label="Revoke" confirmLabel="Yes, revoke" question="Revoke it for good?" target={apiKey.name} busy={revoke.busy} onConfirm={() => revoke.run()} />
        )}
        <ErrorText error={revoke.error} />
      </td>
    </tr>
  );
}

export function ApiKeys() {
  const list = useLoad(() => call<{ items: ApiKey[] }>(api.GET('/api/api-keys')), []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['send']);
  const [expiresAt, setExpiresAt] = useState('');
  const [ipAllowlist, setIpAllowlist] = useState('');
  const [dailyLimit, setDailyLimit] = useState('');
  const [created, setCreated] = useState<ApiKey | null>(null);
  const create = useAction(async () => {
    setCreated(null);
    const body = {
      name,
      scopes,
      expiresAt: expiresAt ? new Date(expiresAt).toISOString() : null,
      ipAllowlist: ipAllowlist.split(/[\s,]+/).filter(Boolean),
      dailyLimit: dailyLimit ? Number(dailyLimit) : null,
    };
    setCreated(await call<ApiKey>(api.POST('/api/api-keys', { body })));
    // the next key starts from a blank form: nothing of this one's scopes or limits carries over
    setName('');
    setScopes(['send']);
    setExpiresAt('');
    setIpAllowlist('');
    setDailyLimit('');
    list.reload();
  });
  const revoked = (id: string) => {
    // a secret that no longer works is not left on screen to be stored
    setCreated((c) => (c?.id === id ? null : c));
    list.reload();
  };
  return (
    <>
      <PageTitle>API keys</PageTitle>
      <section aria-labelledby="new-key">
        <h2 id="new-key">New key</h2>
        <ActionForm class="stack" onSubmit={() => create.run()}>
          <label>
            Name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label class="check" key={s}>
                <input
                  type="checkbox"
                  checked={scopes.includes(s)}
                  onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
                />{' '}
                {s}
              </label>
            ))}
          </fieldset>
          <label>
            Expires at
            <input type="datetime-local" value={expiresAt} onInput={(e) => setExpiresAt(e.currentTarget.value)} />
          </label>
          <label>
            IP allowlist
            <input value={ipAllowlist} placeholder="203.0.113.7, 2001:db8::1" onInput={(e) => setIpAllowlist(e.currentTarget.value)} />
          </label>
          <label>
            Daily limit
            <input type="number" min={1} value={dailyLimit} onInput={(e) => setDailyLimit(e.currentTarget.value)} />
          </label>
          <ErrorText error={create.error} />
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
        </ActionForm>
        {created?.key && (
          <div class="secret card" role="status">
            <p>
              The secret of <strong>{created.name}</strong>, shown this once: store it now.
            </p>
            <p>
              <code data-testid="new-key">{created.key}</code> <CopyButton text={created.key} label="the new key" />
            </p>
          </div>
        )}
      </section>
      <section aria-labelledby="keys">
        <h2 id="keys">Keys</h2>
        <ErrorText error={list.error} />
        <Table columns={['Name', 'Scopes', 'Created', 'Last used', 'Expires', 'Limits', '']}>
          {list.data?.items.map((k) => (
            <KeyRow key={k.id} apiKey={k} onRevoked={() => revoked(k.id)} />
          ))}
        </Table>
      </section>
    </>
  );
}
