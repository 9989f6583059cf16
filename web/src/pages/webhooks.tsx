import { useState } from 'preact/hooks';
import { api, call } from '../api';
import type { Delivery, Webhook } from '../types';
import { Table, ActionForm, ConfirmButton, CopyButton, ErrorText, PageTitle, Status, formatTime, useAction, useLoad } from '../ui';

function Deliveries({ webhook }: { webhook: Webhook }) {
  const list = useLoad(
    () => call<{ items: Delivery[] }>(api.GET('/api/webhooks/{id}/deliveries', { params: { path: { id: webhook.id } } })),
    [webhook.id],
  );
  const retry = useAction(async (id: string) => {
    await call(api.POST('/api/webhook-deliveries/{id}/retry', { params: { path: { id } } }));
    list.reload();
  });
  return (
    <div class="deliveries">
      <h4>Deliveries</h4>
      <button type="button" class="secondary" onClick={list.reload}>
        Refresh<span class="visually-hidden"> deliveries of {webhook.url}</span>
      </button>
      <ErrorText error={list.error ?? retry.error} />
      {list.data && list.data.items.length === 0 && <p>No deliveries yet.</p>}
      {list.data && list.data.items.length > 0 && (
        <Table columns={['Event', 'Status', 'Attempts', 'Last status', 'Next attempt', 'Created', '']}>
          {list.data.items.map((d) => (
            <tr key={d.id}>
              <td>
                {d.event}
                {d.eventId && (
                  <>
                    <br />
                    <code title="the payload's id, which your receiver deduplicates on">{d.eventId}</code>
                  </>
                )}
              </td>
              <td>
                <Status value={d.status} />
              </td>
              <td>{d.attempts}</td>
              <td>
                {d.lastResponseStatus ?? '—'}
                {d.lastError ? ` (${d.lastError})` : ''}
              </td>
              <td>{formatTime(d.nextAttemptAt)}</td>
              <td>{formatTime(d.createdAt)}</td>
              <td>
                {d.status === 'failed' && (
                  <button type="button" disabled={retry.busy} onClick={() => retry.run(d.id)}>
                    Retry<span class="visually-hidden"> {d.event} delivery</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  );
}

/** When a rotated secret starts signing: at once, or later, so the receiver can accept it first. */
const SWITCHES = [
  { label: 'now', ms: 0 },
  { label: 'in 1 hour', ms: 3_600_000 },
  { label: 'in 24 hours', ms: 86_400_000 },
];

function RotateSecret({ webhook, onRotated }: { webhook: Webhook; onRotated: () => void }) {
  const [delay, setDelay] = useState(0);
  const [rotated, setRotated] = useState<{ newSecret: string; activeAt: string } | null>(null);
  const rotate = useAction(async () => {
    const activeAt = delay ? new Date(Date.now() + delay).toISOString() : undefined;
    setRotated(await call<{ newSecret: string; activeAt: string }>(api.POST('/api/webhooks/{id}/rotate-secret', { params: { path: { id: webhook.id } }, body: { activeAt } })));
    onRotated();
  });
  return (
    <div class="row rotate">
      <label>
        New secret signs
        <select value={delay} onChange={(e) => setDelay(Number(e.currentTarget.value))}>
          {SWITCHES.map((s) => (
            <option key={s.ms} value={s.ms}>
              {s.label}
            </option>
          ))}
        </select>
      </label>{' '}
      <ConfirmButton
        // a new key after each rotation: the question closes once answered
        key={rotated?.newSecret ?? 'unrotated'}
        label="Rotate secret"
        confirmLabel="Yes, rotate"
        question={delay ? 'Until then the current secret signs: let your receiver accept both.' : 'The current secret stops signing at once.'}
        target={webhook.url}
        busy={rotate.busy}
        onConfirm={() => rotate.run()}
      />
      {rotated && (
        <p role="status" class="secret">
          New signing secret, signing from {formatTime(rotated.activeAt)}: <code data-testid="new-secret">{rotated.newSecret}</code>{' '}
          <CopyButton text={rotated.newSecret} label={`new secret of ${webhook.url}`} />
        </p>
      )}
      <ErrorText error={rotate.error} />
    </div>
  );
}

function Endpoint({ webhook, onDeleted }: { webhook: Webhook; onDeleted: () => void }) {
  // read on demand: each reading of the secret is recorded in the audit trail
  const [secret, setSecret] = useState<{ secret: string; nextSecret?: string; nextSecretAt?: string } | null>(null);
  const reveal = useAction(async () => {
    setSecret(await call<{ secret: string; nextSecret?: string; nextSecretAt?: string }>(api.POST('/api/webhooks/{id}/reveal-secret', { params: { path: { id: webhook.id } } })));
  });
  const [showDeliveries, setShowDeliveries] = useState(false);
  const [answer, setAnswer] = useState<string | null>(null);
  const test = useAction(async () => {
    setAnswer(null);
    const r = await call<{ delivered: boolean; responseStatus: number | null; error?: string }>(
      api.POST('/api/webhooks/{id}/test', { params: { path: { id: webhook.id } } }),
    );
    setAnswer(
      r.delivered
        ? `Delivered: the endpoint answered ${r.responseStatus}`
        : `Not delivered: ${r.responseStatus ? `the endpoint answered ${r.responseStatus}` : 'no answer'}${r.error ? ` (${r.error})` : ''}`,
    );
  });
  const remove = useAction(async () => {
    await call(api.DELETE('/api/webhooks/{id}', { params: { path: { id: webhook.id } } }));
    onDeleted();
  });
  return (
    <li class="card">
      <h3>{webhook.url}</h3>
      <p>Events: {webhook.events.join(', ')}</p>
      <div class="row">
        <button type="button" class="secondary" aria-expanded={secret !== null} disabled={reveal.busy} onClick={() => (secret === null ? reveal.run() : setSecret(null))}>
          {secret !== null ? 'Hide secret' : 'Reveal secret'}
          <span class="visually-hidden"> {webhook.url}</span>
        </button>
        <button type="button" onClick={() => test.run()} disabled={test.busy}>
          Test<span class="visually-hidden"> {webhook.url}</span>
        </button>
        <button type="button" class="secondary" aria-expanded={showDeliveries} onClick={() => setShowDeliveries(!showDeliveries)}>
          Deliveries<span class="visually-hidden"> {webhook.url}</span>
        </button>
        <ConfirmButton label="Delete" confirmLabel="Confirm delete" target={webhook.url} busy={remove.busy} onConfirm={() => remove.run()} />
      </div>
      {secret !== null && (
        <p class="secret">
          Signing secret: <code data-testid="secret">{secret.secret}</code> <CopyButton text={secret.secret} label={`secret of ${webhook.url}`} />
          {secret.nextSecret && (
            <>
              <br />
              From {formatTime(secret.nextSecretAt!)}: <code data-testid="next-secret">{secret.nextSecret}</code>{' '}
              <CopyButton text={secret.nextSecret} label={`next secret of ${webhook.url}`} />
            </>
          )}
        </p>
      )}
      <RotateSecret webhook={webhook} onRotated={() => setSecret(null)} />
      {test.busy && <p role="status">Sending a test event…</p>}
      {answer && (
        <p role="status" class="answer">
          {answer}
        </p>
      )}
      <ErrorText error={reveal.error ?? test.error ?? remove.error} />
      {showDeliveries && <Deliveries webhook={webhook} />}
    </li>
  );
}

export function Webhooks() {
  const list = useLoad(() => call<{ items: Webhook[] }>(api.GET('/api/webhooks')), []);
  const [url, setUrl] = useState('');
  const add = useAction(async () => {
    await call(api.POST('/api/webhooks', { body: { url } }));
    setUrl('');
    list.reload();
  });
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <ActionForm class="inline" onSubmit={() => add.run()}>
        <label>
          URL
          <input type="url" required value={url} placeholder="https://example.com/hooks" size={32} aria-describedby="webhook-error" onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={add.busy}>
          Add endpoint
        </button>
        <ErrorText error={add.error} id="webhook-error" />
      </ActionForm>
      <ErrorText error={list.error} />
      {list.data && list.data.items.length === 0 && <p>No endpoints yet.</p>}
      <ul class="cards">
        {list.data?.items.map((w) => (
          <Endpoint key={w.id} webhook={w} onDeleted={list.reload} />
        ))}
      </ul>
    </>
  );
}
