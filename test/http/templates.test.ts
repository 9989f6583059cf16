import { expect } from 'chai';
import { isCuid } from '@paralleldrive/cuid2';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

describe('templates: /api/templates', function () {
  this.timeout(30_000);
  let app: TestApp;
  const body = { name: 'welcome', subject: 'Hi {{name}}', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}' };
  const req = (method: string, path: string, b?: unknown, token = app.adminToken) => app.request(method, path, { token, body: b });

  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('creates with a cuid id and reads it back, alone and in the list', async () => {
    const created = await req('POST', '/api/templates', body);
    expect(created.status).to.equal(201);
    expect(created.body).to.include(body);
    expect(isCuid(created.body.id)).to.equal(true);
    expect(Date.parse(created.body.createdAt)).to.not.be.NaN;
    const read = await req('GET', `/api/templates/${created.body.id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.equal(created.body);
    const list = await req('GET', '/api/templates');
    expect(list.body.items.map((t: any) => t.id)).to.include(created.body.id);
  });

  it('PUT replaces the fields given and keeps the rest', async () => {
    const { body: t } = await req('POST', '/api/templates', body);
    const updated = await req('PUT', `/api/templates/${t.id}`, { subject: 'Hello {{name}}' });
    expect(updated.status).to.equal(200);
    expect(updated.body).to.include({ id: t.id, name: 'welcome', subject: 'Hello {{name}}', html: body.html, text: body.text, createdAt: t.createdAt });
    expect(Date.parse(updated.body.updatedAt)).to.be.at.least(Date.parse(t.updatedAt));
    expect((await req('GET', `/api/templates/${t.id}`)).body.subject).to.equal('Hello {{name}}');
  });

  it('DELETE removes it: then GET, PUT and DELETE are 404', async () => {
    const { body: t } = await req('POST', '/api/templates', body);
    const del = await req('DELETE', `/api/templates/${t.id}`);
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.equal({ id: t.id, deleted: true });
    for (const [method, b] of [['GET'], ['PUT', { name: 'x' }], ['DELETE']] as const) {
      const res = await req(method, `/api/templates/${t.id}`, b);
      expect(res.status, method).to.equal(404);
      expect(res.body).to.include({ error: 'Not Found', statusCode: 404 });
    }
    expect((await req('GET', '/api/templates')).body.items.map((x: any) => x.id)).to.not.include(t.id);
  });

  it('an unknown id is 404 for every verb', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      expect((await req(method, '/api/templates/clh3am1yr0000qzrmn831i7rn', method === 'PUT' ? { name: 'x' } : undefined)).status, method).to.equal(404);
    }
  });

  it('validates: every field required on create, no unknown fields, non-empty name and subject', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...body, name: undefined }, /^name: /],
      [{ ...body, subject: undefined }, /^subject: /],
      [{ ...body, html: undefined }, /^html: /],
      [{ ...body, text: undefined }, /^text: /],
      [{ ...body, name: '   ' }, /^name: /],
      [{ ...body, subject: '' }, /^subject: /],
      [{ ...body, html: 42 }, /^html: /],
      [{ ...body, id: 'mine' }, /id/],
    ];
    for (const [b, message] of cases) {
      const res = await req('POST', '/api/templates', b);
      expect(res.status, JSON.stringify(b)).to.equal(400);
      expect(res.body.message).to.match(message);
      expect(res.body).to.include({ error: 'Bad Request', statusCode: 400 });
    }
    const { body: t } = await req('POST', '/api/templates', body);
    expect((await req('PUT', `/api/templates/${t.id}`, { surprise: 1 })).status).to.equal(400);
    expect((await req('PUT', `/api/templates/${t.id}`, { subject: '' })).status).to.equal(400);
    expect((await req('POST', '/api/templates', '{"name":')).status).to.equal(400);
  });

  it('refuses a template a send could not render, on create and on update, and keeps the saved one', async () => {
    const created = await req('POST', '/api/templates', { ...body, subject: 'Hi {{name' });
    expect(created.status).to.equal(400);
    expect(created.body).to.deep.equal({
      message: 'subject: template error: Unclosed tag at 9',
      error: 'Bad Request',
      statusCode: 400,
      issues: [{ field: 'subject', message: 'template error: Unclosed tag at 9' }],
    });
    const { body: t } = await req('POST', '/api/templates', body);
    const updated = await req('PUT', `/api/templates/${t.id}`, { html: '<p>{{#items}}{{name}}</p>' });
    expect(updated.status).to.equal(400);
    expect(updated.body.message).to.equal('html: template error: Unclosed section "items" at 25');
    expect((await req('GET', `/api/templates/${t.id}`)).body).to.deep.equal(t);
  });

  it("another account's template is 404; an API key cannot reach templates", async () => {
    const { body: t } = await req('POST', '/api/templates', body);
    const other = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Other', email: 'owner@other.example', password: 'other-password' } });
    const token = other.body.token;
    for (const method of ['GET', 'PUT', 'DELETE']) {
      expect((await req(method, `/api/templates/${t.id}`, method === 'PUT' ? { name: 'x' } : undefined, token)).status, method).to.equal(404);
    }
    expect((await req('GET', '/api/templates', undefined, token)).body.items).to.deep.equal([]);
    const { key } = await app.createApiKey(['send']);
    const withKey = await app.request('GET', '/api/templates', { apiKey: key });
    expect(withKey.status).to.be.oneOf([401, 403]);
    expect((await req('GET', `/api/templates/${t.id}`)).body.name).to.equal('welcome');
  });

  it('POST /:id/test sends the saved template once, rendered with the variables given, tagged test, as a send like any other', async () => {
    const { from } = await readyToSend(app, { domain: 'templates-test.example.com' });
    const { body: t } = await req('POST', '/api/templates', body);
    const sent = await req('POST', `/api/templates/${t.id}/test`, { to: 'me@example.org', fromEmail: from, fromName: 'Acme', variables: { name: 'Ada' } });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    expect(sent.body.queued).to.equal(true);
    const message = await eventually(
      () => req('GET', `/api/messages/${sent.body.messageLogId}`),
      (r) => r.status === 200 && r.body.status === 'sent',
    );
    // a dashboard user's send: no API key made it
    expect(message.body).to.deep.include({ to: 'me@example.org', subject: 'Hi Ada', templateId: t.id, tags: ['test'], apiKeyId: null });
    const outbox = await req('GET', '/api/sandbox/emails');
    expect(outbox.body.items.find((e: any) => e.to === 'me@example.org')).to.deep.include({ subject: 'Hi Ada', text: 'Hi Ada' });

    // the rules of every send: a suppressed recipient, an unverified sender
    await req('POST', '/api/suppressions', { email: 'gone@example.org' });
    const suppressed = await req('POST', `/api/templates/${t.id}/test`, { to: 'gone@example.org', fromEmail: from });
    expect([suppressed.status, suppressed.body.message]).to.deep.equal([400, 'gone@example.org is suppressed']);
    const unverified = await req('POST', `/api/templates/${t.id}/test`, { to: 'me@example.org', fromEmail: 'me@unverified.example' });
    expect([unverified.status, unverified.body.message]).to.deep.equal([400, 'me@unverified.example is not verified for sending']);
    const bad = await req('POST', `/api/templates/${t.id}/test`, { to: 'me@example.org', fromEmail: from, subject: 'not here' });
    expect(bad.status).to.equal(400);
    expect((await req('POST', '/api/templates/no-such-template/test', { to: 'me@example.org', fromEmail: from })).status).to.equal(404);
    const { key } = await app.createApiKey(['send']);
    expect((await app.request('POST', `/api/templates/${t.id}/test`, { apiKey: key, body: { to: 'me@example.org', fromEmail: from } })).status).to.be.oneOf([401, 403]);
  });
});
