import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';
import { INSTANT_MESSAGE } from '../../src/domain/instant.js';

const b64url = (text: string) => Buffer.from(text).toString('base64url');

/**
 * Values JavaScript reads but PostgreSQL refuses: each reached a query (or a projection) as it was
 * and answered 500. A date parameter or field, or a cursor, that the service cannot use is a 400.
 */
const HOSTILE_INSTANTS = ['2026-11-27T10:00:00-20:00', '2026-11-27T10:00:00+16:00', '2026-11-27T10:00:00-16:00', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-10:00'];
const HOSTILE_PAGE_CURSORS = ['["2026-11-27 10:00:00-20","x"]', '["0000-01-01 00:00:00+00","x"]', '["2026-11-27 10:00:00+00","a\\u0000b"]', '["2026-02-30 10:00:00+00","x"]', '["2026-11-27 10:00:00+16","x"]', '["2026-11-27 10:00:00+00",1]'].map(b64url);
const HOSTILE_AUDIT_CURSORS = ['9223372036854775808', '9999999999999999999'].map(b64url);

describe('hostile query values: dates and cursors PostgreSQL would refuse are 400, never 500', function () {
  this.timeout(60_000);
  let app: TestApp;
  let sender: { key: string; from: string };
  let hookId: string;
  let templateId: string;

  before(async () => {
    app = await startTestApp();
    sender = await readyToSend(app, { scopes: ['send', 'read_events'] });
    hookId = (await app.request('POST', '/api/webhooks', { token: app.adminToken, body: { url: 'http://127.0.0.1:1/hook', events: ['contact.unsubscribed'] } })).body.id;
    templateId = (await app.request('POST', '/api/templates', { token: app.adminToken, body: { name: 't', subject: 'Hi', html: '<p>x</p>', text: 'x' } })).body.id;
    // a page of each list to come after
    await app.request('POST', '/api/suppressions', { token: app.adminToken, body: { email: 'gone@example.org' } });
  });
  after(async () => {
    await app?.close();
  });

  function expectRefused(res: { status: number; body: any }, message: string, what: string) {
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(400);
    expect(res.body, what).to.include({ message, error: 'Bad Request', statusCode: 400 });
  }

  it('from and to of the message list, aggregate and chart, with a token or an API key, and of the audit trail', async () => {
    for (const at of HOSTILE_INSTANTS) {
      for (const field of ['from', 'to']) {
        const query = `?${field}=${encodeURIComponent(at)}`;
        for (const path of ['/api/messages', '/api/messages/aggregate', '/api/messages/timeseries']) {
          expectRefused(await app.request('GET', path + query, { token: app.adminToken }), `${field}: ${INSTANT_MESSAGE}`, `${path}${query} (token)`);
          expectRefused(await app.request('GET', path + query, { apiKey: sender.key }), `${field}: ${INSTANT_MESSAGE}`, `${path}${query} (key)`);
        }
        expectRefused(await app.request('GET', `/api/audit${query}`, { token: app.adminToken }), `${field}: ${INSTANT_MESSAGE}`, `/api/audit${query}`);
      }
    }
  });

  it('still takes an offset of a real time zone and the years 0001 to 9999', async () => {
    for (const at of ['2026-11-27T10:00:00+14:00', '2026-11-27T10:00:00-12:00', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
      for (const path of ['/api/messages', '/api/messages/aggregate', '/api/audit']) {
        const res = await app.request('GET', `${path}?from=${encodeURIComponent(at)}`, { token: app.adminToken });
        expect(res.status, `${path} ${at}: ${res.text}`).to.equal(200);
      }
    }
  });

  it('instants of bodies: an API key expiry, a campaign start, a secret rotation, a scheduled send', async () => {
    const campaign = await app.request('POST', '/api/campaigns', { token: app.adminToken, body: { name: 'c', templateId, fromEmail: sender.from, audience: {} } });
    for (const at of HOSTILE_INSTANTS) {
      expectRefused(await app.request('POST', '/api/api-keys', { token: app.adminToken, body: { name: 'x', scopes: ['send'], expiresAt: at } }), `expiresAt: ${INSTANT_MESSAGE}`, `expiresAt ${at}`);
      expectRefused(await app.request('POST', `/api/campaigns/${campaign.body.id}/send`, { token: app.adminToken, body: { scheduledAt: at } }), `scheduledAt: ${INSTANT_MESSAGE}`, `scheduledAt ${at}`);
      expectRefused(await app.request('POST', `/api/webhooks/${hookId}/rotate-secret`, { token: app.adminToken, body: { activeAt: at } }), `activeAt: ${INSTANT_MESSAGE}`, `activeAt ${at}`);
      expectRefused(
        await app.request('POST', '/api/send/transactional', { apiKey: sender.key, body: { to: 'a@example.org', fromEmail: sender.from, subject: 's', html: 'h', text: 't', sendAt: at } }),
        `sendAt: ${INSTANT_MESSAGE}`,
        `sendAt ${at}`,
      );
    }
    // the accounts read model took every key created meanwhile (an expiry of year 10000 once stopped it)
    expect((await app.request('GET', '/api/api-keys', { token: app.adminToken })).status).to.equal(200);
  });

  it('a page cursor of suppressions or webhook deliveries that this service did not issue → 400 cursor is invalid', async () => {
    for (const cursor of HOSTILE_PAGE_CURSORS) {
      for (const path of ['/api/suppressions', `/api/webhooks/${hookId}/deliveries`]) {
        expectRefused(await app.request('GET', `${path}?cursor=${cursor}`, { token: app.adminToken }), 'cursor is invalid', `${path} ${Buffer.from(cursor, 'base64url').toString()}`);
      }
    }
    // what the service issues still pages
    const first = await app.request('GET', '/api/suppressions?limit=1', { token: app.adminToken });
    expect(first.status).to.equal(200);
  });

  it('an audit cursor past the largest sequence number → 400 cursor is invalid', async () => {
    for (const cursor of HOSTILE_AUDIT_CURSORS) {
      expectRefused(await app.request('GET', `/api/audit?cursor=${cursor}`, { token: app.adminToken }), 'cursor is invalid', Buffer.from(cursor, 'base64url').toString());
    }
    expect((await app.request('GET', `/api/audit?cursor=${b64url('9223372036854775807')}`, { token: app.adminToken })).status).to.equal(200);
  });
});
