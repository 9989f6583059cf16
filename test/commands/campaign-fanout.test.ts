import { expect } from 'chai';
import { createCampaignFanout, type CampaignFanoutDeps } from '../../src/commands/campaign-fanout.js';
import { createSendEmail } from '../../src/commands/send-email.js';
import { createCampaignTurns } from '../../src/adapters/db/campaign-turns.js';
import { getOrCreateSecret } from '../../src/adapters/db/secrets.js';
import { campaignDecider, campaignStream, type CampaignState } from '../../src/domain/campaigns/campaign.js';
import { campaignMessageId } from '../../src/domain/campaigns/personalise.js';
import { fold } from '../../src/domain/decider.js';
import { messageStream } from '../../src/domain/messages/events.js';
import { renderTemplate } from '../../src/domain/email/render.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eventually, readyToSend } from '../support/email-setup.js';

/**
 * The fan-out's steps run here, with what a test wants to see or change: each campaign is sent while
 * this file holds its turn, so the app's own fan-out waits and then finds nothing left to do.
 */
describe('campaign fan-out steps', function () {
  this.timeout(60_000);
  let app: TestApp;
  let from: string;
  let sendEmail: CampaignFanoutDeps['sendEmail'];
  const api = (method: string, path: string, body?: unknown) => app.request(method, path, { token: app.adminToken, body });

  before(async () => {
    app = await startTestApp();
    ({ from } = await readyToSend(app));
    const { infra } = app;
    sendEmail = createSendEmail({
      eventStore: infra.bulk.eventStore,
      db: infra.db,
      counters: infra.bulk.counters,
      attachmentStore: infra.attachmentStore,
      personOf: infra.privacy.personOf,
      linkSecret: await getOrCreateSecret(infra.db, 'links'),
      baseUrl: () => app.config.BASE_URL,
    });
  });
  after(async () => app?.close());

  const importList = async (listId: string, n: number) => {
    const contacts = Array.from({ length: n }, (_, i) => ({ email: `${listId.toLowerCase()}${i}@example.org`, firstName: `F${i}` }));
    expect((await api('POST', '/api/contacts/import', { contacts, listId })).status).to.equal(200);
  };
  const template = async (html: string) => (await api('POST', '/api/templates', { name: 't', subject: 'Hi', html, text: 't' })).body.id as string;

  // from the log: the read model may not have the last step yet
  const stateOf = async (id: string) => fold(campaignDecider, await app.infra.eventStore.readStream(campaignStream(id)));

  /**
   * Sends a new campaign and runs its fan-out here, step after step (`between` them, what the test
   * does meanwhile), until it stops; answers the campaign's state then.
   */
  async function fanOut(campaign: Record<string, unknown>, deps: Partial<CampaignFanoutDeps> = {}, between?: (state: CampaignState) => Promise<void>) {
    const created = await api('POST', '/api/campaigns', { name: 'c', fromEmail: from, ...campaign });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id: string = created.body.id;
    const fanout = createCampaignFanout({ db: app.infra.db, eventStore: app.infra.eventStore, sendEmail, clock: () => new Date(), ...deps });
    await createCampaignTurns(app.infra.db).step(id, async () => {
      expect((await api('POST', `/api/campaigns/${id}/send`, {})).status).to.equal(202);
      while (await fanout.step(id)) await between?.(await stateOf(id));
    });
    return stateOf(id);
  }

  it('a template that fails to render stops the step at its first failure: one render, not one for each contact', async () => {
    await importList('BOOM20', 20);
    let renders = 0;
    const render: typeof renderTemplate = (parts, variables) => {
      renders++;
      return renderTemplate(parts, variables);
    };
    const campaign = await fanOut(
      {
        templateId: await template('<p>{{#items}}{{#items}}{{firstName}}{{/items}}{{/items}}</p>'),
        audience: { listId: 'BOOM20' },
        variables: { items: Array.from({ length: 1000 }, (_, i) => i) },
      },
      { render },
    );
    expect(campaign).to.deep.include({ status: 'paused', pausedReason: 'template_failed' });
    expect(campaign.progress).to.deep.include({ queued: 0, skipped: 0 });
    expect(renders).to.equal(1);
  });

  it('costly renders of a step take turns with the rest of the thread: other work runs between two renders', async () => {
    await importList('SLOW5', 5);
    const log: string[] = [];
    const render: typeof renderTemplate = (parts, variables) => {
      log.push('render');
      // a costly render: the thread is held this long
      const until = Date.now() + 20;
      while (Date.now() < until);
      // the other work, asked for now, runs at the thread's next turn
      setImmediate(() => log.push('other'));
      return renderTemplate(parts, variables);
    };
    const campaign = await fanOut({ templateId: await template('<p>{{firstName}}</p>'), audience: { listId: 'SLOW5' } }, { render });
    expect(campaign).to.deep.include({ status: 'sent' });
    expect(campaign.progress).to.deep.include({ queued: 5 });
    const renders = log.flatMap((entry, i) => (entry === 'render' ? [i] : []));
    expect(renders).to.have.length(5);
    // between any two renders, the work the first one left for the next turn has run
    for (let i = 1; i < renders.length; i++) expect(log.slice(renders[i - 1], renders[i]), JSON.stringify(log)).to.include('other');
  });

  it('a contact erased or unsubscribed after the step read its page is not sent to: skipped and counted when its message would be queued', async () => {
    await importList('LATECHANGE', 4);
    const emails = Array.from({ length: 4 }, (_, i) => `latechange${i}@example.org`);
    const ids = new Map<string, string>();
    for (const email of emails) ids.set(email, (await api('GET', `/api/contacts/${email}`)).body.id);
    const [, erased, unsubscribed] = emails;
    // the change is answered just before the contact's message is queued, the step's page read long before
    const changing: CampaignFanoutDeps['sendEmail'] = async (sender, input, options) => {
      if (input.to === erased) expect((await api('DELETE', `/api/contacts/${erased}?erase=true`)).status).to.equal(200);
      if (input.to === unsubscribed) expect((await api('POST', '/api/contacts', { email: unsubscribed, status: 'unsubscribed' })).status).to.equal(200);
      return sendEmail(sender, input, options);
    };
    const campaign = await fanOut({ templateId: await template('<p>{{firstName}}</p>'), audience: { listId: 'LATECHANGE' } }, { sendEmail: changing });
    expect(campaign.status).to.equal('sent');
    expect(campaign.progress).to.deep.include({ queued: 2, skipped: 2 });
    const queued = [];
    for (const email of emails) {
      const stream = await app.infra.eventStore.readStream(messageStream(campaignMessageId(campaign.campaignId!, ids.get(email)!)));
      if (stream.length) queued.push(email);
    }
    expect(queued).to.deep.equal([emails[0], emails[3]]);
  });

  it('a contact that joins the audience behind the cursor while it sends is reached, once; contacts reached before and changed since are not counted again', async () => {
    await importList('JOIN', 10);
    const unsubscribedMember = 'join0@example.org';
    expect((await api('POST', '/api/contacts', { email: unsubscribedMember, status: 'unsubscribed' })).status).to.equal(200);
    // outside the audience until they join it
    const outsiders = Array.from({ length: 20 }, (_, i) => ({ email: `outsider${i}@example.org`, firstName: `O${i}` }));
    expect((await api('POST', '/api/contacts/import', { contacts: outsiders, listId: 'ELSEWHERE' })).status).to.equal(200);
    const idOf = new Map<string, string>();
    for (const email of [...Array.from({ length: 10 }, (_, i) => `join${i}@example.org`), ...outsiders.map((o) => o.email)]) {
      idOf.set(email, (await api('GET', `/api/contacts/${email}`)).body.id);
    }
    const joined: string[] = [];
    const campaign = await fanOut({ templateId: await template('<p>{{firstName}}</p>'), audience: { listId: 'JOIN' } }, { stepSize: 2 }, async (state) => {
      if (state.late) {
        // the audience walked: those it reached change (a new name), which makes them contacts changed since it began
        for (let i = 0; i < 10; i++) expect((await api('POST', '/api/contacts', { email: `join${i}@example.org`, lastName: `changed ${i}` })).status).to.equal(200);
        return;
      }
      // an outsider whose id sorts before where the walk in id order has got to joins: the first subscribed, the second not
      const behind = outsiders.find((o) => !joined.includes(o.email) && idOf.get(o.email)! < state.progress.cursor!);
      if (!behind || joined.length === 2) return;
      const status = joined.length === 0 ? 'subscribed' : 'unsubscribed';
      expect((await api('POST', '/api/contacts', { email: behind.email, listIds: ['JOIN'], status })).status).to.equal(200);
      joined.push(behind.email);
    });
    expect(joined).to.have.length(2);
    expect(campaign.status).to.equal('sent');
    // the ten members (one unsubscribed) and the two who joined (one unsubscribed)
    expect(campaign.progress).to.deep.include({ queued: 10, skipped: 2 });
    const queued = [];
    for (const [email, contactId] of idOf) {
      if ((await app.infra.eventStore.readStream(messageStream(campaignMessageId(campaign.campaignId!, contactId)))).length) queued.push(email);
    }
    expect(queued.sort()).to.deep.equal([...Array.from({ length: 9 }, (_, i) => `join${i + 1}@example.org`), joined[0]].sort());
    const view = await eventually(() => api('GET', `/api/campaigns/${campaign.campaignId}`), (r) => r.body.status === 'sent');
    expect(view.body.progress).to.deep.include({ audience: 12, queued: 10, skipped: 2 });
  });

  it("a joiner's message queued by a run of the late walk that died before recording it is counted once, and queued once", async () => {
    await importList('REDO', 3);
    expect((await api('POST', '/api/contacts', { email: 'redo.joiner@example.org', firstName: 'J' })).status).to.equal(201);
    const joinerId: string = (await api('GET', '/api/contacts/redo.joiner@example.org')).body.id;
    let joined = false;
    let died = false;
    const campaign = await fanOut({ templateId: await template('<p>{{firstName}}</p>'), audience: { listId: 'REDO' } }, {}, async (state) => {
      // joins once the walk in id order is over: only the late walk can reach it
      if (state.late && !joined) {
        joined = true;
        expect((await api('POST', '/api/contacts', { email: 'redo.joiner@example.org', listIds: ['REDO'] })).status).to.equal(200);
      }
      if (state.late?.pending.includes(joinerId) && !died) {
        // as the run that reached it would have, before it died
        died = true;
        const sender = { kind: 'user' as const, accountId: state.accountId!, userId: state.createdBy!.replace(/^user:/, '') };
        const input = { to: 'redo.joiner@example.org', fromEmail: from, subject: 'Hi', html: '<p>J</p>', text: 't', campaign: { id: state.campaignId!, templateId: state.definition!.templateId, contactId: joinerId } };
        await sendEmail(sender, input, { messageId: campaignMessageId(state.campaignId!, joinerId), at: new Date(), cause: { correlationId: state.campaignId! } });
      }
    });
    expect(died).to.equal(true);
    expect(campaign.status).to.equal('sent');
    expect(campaign.progress).to.deep.include({ queued: 4, skipped: 0 });
    const stream = await app.infra.eventStore.readStream(messageStream(campaignMessageId(campaign.campaignId!, joinerId)));
    expect(stream.filter((e) => e.type === 'EmailQueued')).to.have.length(1);
  });
});
