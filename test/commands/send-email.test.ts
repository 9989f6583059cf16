import { expect } from 'chai';
import { createSendEmail } from '../../src/commands/send-email.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { readyToSend } from '../support/email-setup.js';

describe('SendEmail: the daily cap slot of a send that is not recorded', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('is given back when the append or building the message fails, so failures do not use up the cap', async () => {
    const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: 'Flaky', email: 'owner@flaky.example', password: 'flaky-password' } });
    await app.request('PATCH', '/api/settings', { token: signup.body.token, body: { dailySendCap: 2 } });
    const { from } = await readyToSend(app, { token: signup.body.token, domain: 'flaky.example' });
    const account = await app.infra.db('users').where({ email: 'owner@flaky.example' }).first('account_id', 'id');

    // the real event store, except that the next `failures` appends fail as a lost connection would
    let failures = 0;
    const flaky: EventStore = {
      ...app.infra.eventStore,
      append: (...args) => (failures-- > 0 ? Promise.reject(new Error('connection lost')) : app.infra.eventStore.append(...args)),
    };
    // and building the message (links, unsubscribe URL, tracking rewrite) fails as often as asked
    let buildFailures = 0;
    const baseUrl = () => {
      if (buildFailures-- > 0) throw new Error('cannot build the message');
      return app.baseUrl;
    };
    const sendEmail = createSendEmail({ eventStore: flaky, db: app.infra.db, keys: undefined as never, counters: app.infra.counters, attachmentStore: app.infra.attachmentStore, linkSecret: 'secret', baseUrl, personOf: app.infra.privacy.personOf });
    const principal = { kind: 'user' as const, accountId: account.account_id, userId: account.id };
    const send = (to: string) =>
      sendEmail(principal, { to, fromEmail: from, subject: 's', html: '<p>h <a href="https://example.org/x">x</a></p>', text: 't' }).then(
        () => 'queued',
        (e: Error) => e.message,
      );

    failures = 2;
    expect(await send('fail1@example.org')).to.equal('connection lost');
    expect(await send('fail2@example.org')).to.equal('connection lost');
    buildFailures = 2;
    expect(await send('fail3@example.org')).to.equal('cannot build the message');
    expect(await send('fail4@example.org')).to.equal('cannot build the message');
    // the cap of 2 is whole: two sends go through, the third is refused
    expect(await send('ok1@example.org')).to.equal('queued');
    expect(await send('ok2@example.org')).to.equal('queued');
    expect(await send('ok3@example.org')).to.equal('Daily send limit reached');
  });
});
