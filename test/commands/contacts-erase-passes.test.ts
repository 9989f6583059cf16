import { expect } from 'chai';
import { createContactCommands } from '../../src/commands/contacts.js';
import { createProjectionWaiter } from '../../src/projections/waiter.js';
import type { Position } from '../../src/ports/event-store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

/**
 * A message sent to a person while their erasure runs is sealed under a key made after the erasure
 * destroyed theirs: the erasure finds that key and erases again before it answers, so the message is
 * forgotten with the rest. Here the send is made to land exactly there: while the first pass waits
 * for the read models.
 */
describe('erasing a person who is sent to while the erasure runs', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());

  it('erases again, before answering, what was sealed for them meanwhile; with nothing new, one pass', async () => {
    const { key, from } = await readyToSend(app);
    const to = 'sent.meanwhile@example.org';
    const send = async (marker: string) => {
      const res = await app.request('POST', '/api/send/transactional', { apiKey: key, body: { to, fromEmail: from, subject: marker, html: `<p>${marker}</p>`, text: marker } });
      expect(res.status).to.equal(201);
      return res.body.messageLogId as string;
    };
    const row = (id: string) => eventually(() => app.infra.db('messages').where({ id }).first(), (r) => Boolean(r));
    const before = await send('Before-Erasure-1');
    await row(before);

    const waiter = createProjectionWaiter({ db: app.infra.db });
    let meanwhile: string | undefined;
    let passes = 0;
    const commands = createContactCommands({
      eventStore: app.infra.eventStore,
      db: app.infra.db,
      personOf: app.infra.privacy.personOf,
      keys: app.infra.privacy.store,
      forget: app.infra.privacy.keys.forget,
      waitFor: async (name: string, position: Position | undefined) => {
        if (name === 'messages') {
          passes++;
          // the first pass has destroyed the keys: a send now is sealed under a new one
          if (passes === 1 && !meanwhile) meanwhile = await send('Meanwhile-Erasure-2').then(async (id) => (await row(id), id));
        }
        if (position) await waiter.waitFor(name, position, 10_000);
      },
    });
    expect(await commands.erase((await row(before)).account_id, { actor: 'test', clientIp: null }, to)).to.deep.equal({ erased: true });
    expect(passes).to.equal(2);
    for (const id of [before, meanwhile!]) {
      const detail = (await app.request('GET', `/api/messages/${id}`, { token: app.adminToken })).body;
      expect(detail, id).to.include({ to: null, subject: null, html: null, text: null });
    }

    passes = 0;
    await commands.erase((await row(before)).account_id, { actor: 'test', clientIp: null }, to);
    expect(passes).to.equal(1);
  });
});
