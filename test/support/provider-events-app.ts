import { expect } from 'chai';
import type { TestApp } from './app.js';
import { eventually, readyToSend, switchProvider, type IdentityChecker } from './email-setup.js';

/**
 * A second account (signed up), able to send through `emailProvider`: for events that name one
 * account's message and another account's address.
 */
export async function otherAccount(app: TestApp, name: string, emailProvider: 'ses' | 'postmark', ses?: IdentityChecker) {
  const signup = await app.request('POST', '/api/auth/signup', { body: { accountName: name, email: `owner@${name}.example.net`, password: 'correct-horse-battery' } });
  expect(signup.status, JSON.stringify(signup.body)).to.equal(201);
  const token: string = signup.body.token;
  const sender = await readyToSend(app, { token, domain: `${name}.example.net` });
  await switchProvider(app, emailProvider, { token, ses });
  return { accountId: signup.body.accountId as string, token, sender };
}

/** Helpers around the whole app for provider-event tests. */
export function providerEventsClient(app: TestApp, sender: { key: string; from: string }) {
  return {
    /** sends one transactional email and waits until the provider has accepted it; returns both ids */
    async sendAccepted(to: string) {
      const res = await app.request('POST', '/api/send/transactional', {
        apiKey: sender.key,
        body: { to, fromEmail: sender.from, subject: 'Hello', html: '<p>Hello</p>', text: 'Hello' },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const id: string = res.body.messageLogId;
      const history = await eventually(
        () => app.infra.eventStore.readStream(`message-${id}`),
        (events) => events.some((e) => e.type === 'ProviderAccepted'),
      );
      const providerMessageId = history.find((e) => e.type === 'ProviderAccepted')!.data.providerMessageId as string;
      // events naming the message by the provider's id alone find it through this read model
      await eventually(() => app.infra.db('provider_message_ids').where({ provider_message_id: providerMessageId }).first(), Boolean);
      return { id, providerMessageId };
    },

    /** GET /api/messages/:id once the read model satisfies `ok` */
    message(id: string, ok: (m: any) => boolean) {
      return eventually(
        async () => (await app.request('GET', `/api/messages/${id}`, { token: app.adminToken })).body,
        (m) => Boolean(m?.id) && ok(m),
      );
    },

    /** the message stream's event types, straight from the event store */
    async historyTypes(id: string) {
      return (await app.infra.eventStore.readStream(`message-${id}`)).map((e) => e.type);
    },

    /** the suppression stream of one address, straight from the event store */
    async suppressionEvents(value: string) {
      const accountId = (await app.infra.db('accounts').where({ name: 'default' }).first('id'))?.id;
      return app.infra.eventStore.readStream(`suppression-${accountId}-${app.infra.privacy.personOf(value)}`);
    },

    async suppressionRow(value: string) {
      return app.infra.db('suppressions').where({ value }).first();
    },

    /** the accounts that have `value` on their suppression list */
    async suppressedIn(value: string): Promise<string[]> {
      return (await app.infra.db('suppressions').where({ value }).select('account_id')).map((r) => r.account_id);
    },
  };
}
