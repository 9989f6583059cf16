import { useState } from 'preact/hooks';
import { api, call } from '../api';
import type { Identity } from '../types';
import { Table, ActionForm, ConfirmButton, CopyButton, ErrorText, PageTitle, Status, useAction, useLoad } from '../ui';

function Checks({ identity }: { identity: Identity }) {
  return (
    <dl class="facts compact">
      <dt>DKIM</dt>
      <dd>
        <Status value={identity.dkim} />
      </dd>
      <dt>SPF</dt>
      <dd>
        <Status value={identity.spf} />
      </dd>
      <dt>MAIL FROM</dt>
      <dd>
        <Status value={identity.mailFrom} />
      </dd>
    </dl>
  );
}

function overall(i: Identity) {
  return i.verified ? 'verified' : [i.dkim, i.spf, i.mailFrom].includes('failed') ? 'failed' : 'pending';
}

function DomainCard({ domain, onChange }: { domain: Identity; onChange: () => void }) {
  const verify = useAction(async () => {
    await call(api.POST('/api/domains/{id}/verify', { params: { path: { id: domain.id } } }));
    onChange();
  });
  const remove = useAction(async () => {
    await call(api.DELETE('/api/domains/{id}', { params: { path: { id: domain.id } } }));
    onChange();
  });
  return (
    <li class="card">
      <h3>
        {domain.domain} <Status value={overall(domain)} />
      </h3>
      <Checks identity={domain} />
      <Table columns={['Type', 'Name', 'Value']} caption={`DNS records to publish for ${domain.domain}`}>
        {domain.dnsRecords.map((r, i) => (
          <tr key={i}>
            <td>{r.type}</td>
            <td>
              <code>{r.name}</code> <CopyButton text={r.name} label={`${r.type} name ${r.name}`} />
            </td>
            <td>
              <code>{r.value}</code> <CopyButton text={r.value} label={`${r.type} value for ${r.name}`} />
            </td>
          </tr>
        ))}
      </Table>
      <div class="row">
        <button type="button" onClick={() => verify.run()} disabled={verify.busy}>
          Verify<span class="visually-hidden"> {domain.domain}</span>
        </button>
        <ConfirmButton label="Remove" confirmLabel="Yes, remove" question="Sends from this domain will be refused." target={domain.domain!} busy={remove.busy} onConfirm={() => remove.run()} />
      </div>
      <ErrorText error={verify.error ?? remove.error} />
    </li>
  );
}

function Senders() {
  const list = useLoad(() => call<{ items: Identity[] }>(api.GET('/api/senders')), []);
  const [email, setEmail] = useState('');
  const add = useAction(async () => {
    await call(api.POST('/api/senders', { body: { email } }));
    setEmail('');
    list.reload();
  });
  const verify = useAction(async (id: string) => {
    await call(api.POST('/api/senders/{id}/verify', { params: { path: { id } } }));
    list.reload();
  });
  const remove = useAction(async (id: string) => {
    await call(api.DELETE('/api/senders/{id}', { params: { path: { id } } }));
    list.reload();
  });
  return (
    <section aria-labelledby="senders">
      <h2 id="senders">Single sender identities</h2>
      <ActionForm class="inline" onSubmit={() => add.run()}>
        <label>
          Sender email
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={add.busy}>
          Add sender
        </button>
        <ErrorText error={add.error} />
      </ActionForm>
      <ErrorText error={list.error ?? verify.error ?? remove.error} />
      <ul class="plain">
        {list.data?.items.map((s) => (
          <li key={s.id}>
            {s.email} <Status value={overall(s)} />{' '}
            <button type="button" class="secondary" onClick={() => verify.run(s.id)}>
              Verify<span class="visually-hidden"> {s.email}</span>
            </button>{' '}
            <ConfirmButton label="Remove" confirmLabel="Yes, remove" question="Sends from it will be refused." target={s.email!} busy={remove.busy} onConfirm={() => remove.run(s.id)} />
          </li>
        ))}
      </ul>
    </section>
  );
}

export function Domains() {
  const list = useLoad(() => call<{ items: Identity[] }>(api.GET('/api/domains')), []);
  const [domain, setDomain] = useState('');
  const add = useAction(async () => {
    await call(api.POST('/api/domains', { body: { domain } }));
    setDomain('');
    list.reload();
  });
  return (
    <>
      <PageTitle>Domains</PageTitle>
      {/* one column: a domain's DNS records need the page's width to be read and copied */}
      <section aria-labelledby="domains">
        <h2 id="domains">Domains</h2>
        <ActionForm class="inline" onSubmit={() => add.run()}>
          <label>
            Domain
            <input required value={domain} placeholder="example.com" onInput={(e) => setDomain(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={add.busy}>
            Add domain
          </button>
          <ErrorText error={add.error} />
        </ActionForm>
        <ErrorText error={list.error} />
        {list.data && list.data.items.length === 0 && <p>No domains yet.</p>}
        <ul class="cards">
          {list.data?.items.map((d) => (
            <DomainCard key={d.id} domain={d} onChange={list.reload} />
          ))}
        </ul>
      </section>
      <Senders />
    </>
  );
}
