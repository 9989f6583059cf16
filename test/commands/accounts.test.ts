import { expect } from 'chai';
import { createPostgresEventStore } from '../../src/adapters/eventstore/postgres-event-store.js';
import { createAccountCommands, DEFAULT_ACCOUNT_ID } from '../../src/commands/accounts.js';
import { accountStream } from '../../src/domain/accounts/account.js';
import { userStream } from '../../src/domain/accounts/user.js';
import { createJwtIssuer } from '../../src/adapters/session/jwt.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { createProjectionWaiter } from '../../src/projections/waiter.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

/**
 * The store without appendMany, as EventStoreDB is (it cannot commit across streams); `failAt` makes
 * its n-th append (1-based) throw, as a store that stops between two writes would.
 */
function streamByStream(store: EventStore, failAt?: number): EventStore & { appends: string[] } {
  const appends: string[] = [];
  return {
    appends,
    async append(streamId, events, options) {
      appends.push(streamId);
      if (appends.length === failAt) throw new Error('store stopped between two appends');
      return store.append(streamId, events, options);
    },
    readStream: (streamId, options) => store.readStream(streamId, options),
    readAll: (options) => store.readAll(options),
    subscribe: (options) => store.subscribe(options),
    close: async () => {},
  };
}

/** Makes the database refuse, inside the appending transaction, events that `condition` matches. */
async function refuseEvents(db: TestApp['infra']['db'], condition: string): Promise<() => Promise<void>> {
  await db.raw(`
    CREATE OR REPLACE FUNCTION test_refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${condition} THEN RAISE EXCEPTION 'test: this event cannot be written'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_refuse_event();`);
  return async () => void (await db.raw('DROP TRIGGER test_refuse_event ON events; DROP FUNCTION test_refuse_event()'));
}

/**
 * Signup and first boot write two streams (the account and its owner). Whatever fails between them,
 * no email is left taken by a user whose account does not exist, and the same request again works.
 */
describe('account commands: an account and its owner are written together', function () {
  this.timeout(60_000);

  describe('signup', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ ALLOW_SIGNUP: 'true' });
    });
    after(async () => app?.close());

    const commands = (eventStore: EventStore) => {
      const waiter = createProjectionWaiter({ db: app.infra.db });
      return createAccountCommands({
        eventStore,
        db: app.infra.db,
        jwt: createJwtIssuer('test-secret-test-secret-test-secret'),
        waitFor: (name, position) => (position ? waiter.waitFor(name, position, 10_000) : Promise.resolve()),
      });
    };
    const login = (email: string, password: string) => app.request('POST', '/api/auth/login', { body: { email, password } });
    /** the account works: its owner logs in and reads its settings */
    const works = async (email: string, password: string) => {
      const res = await login(email, password);
      expect(res.status).to.equal(200);
      expect((await app.request('GET', '/api/settings', { token: res.body.token })).status).to.equal(200);
    };

    it('in one transaction: a failure writing the owner leaves neither account nor user, and the retry signs up', async () => {
      const email = 'owner@tx-user.example';
      const allow = await refuseEvents(app.infra.db, `NEW.type = 'UserRegistered' AND NEW.data->>'email' = '${email}'`);
      let err: unknown;
      try {
        err = await commands(app.infra.eventStore).signup({ accountName: 'Tx', email, password: 'tx-password' }).catch((e) => e);
      } finally {
        await allow();
      }
      expect(err).to.be.instanceOf(Error);
      expect(await app.infra.eventStore.readStream(userStream(email))).to.deep.equal([]);
      const accounts = await app.infra.eventStore.readAll({ streamPrefixes: ['account-'], eventTypes: ['AccountCreated'] });
      expect(accounts.map((e) => e.data.name)).to.not.include('Tx');
      expect((await login(email, 'tx-password')).status).to.equal(401);

      await commands(app.infra.eventStore).signup({ accountName: 'Tx', email, password: 'tx-password' });
      await works(email, 'tx-password');
    });

    it('in one transaction: a failure writing the account (the reported order) takes no email either', async () => {
      const email = 'owner@tx-account.example';
      const allow = await refuseEvents(app.infra.db, `NEW.type = 'AccountCreated' AND NEW.data->>'name' = 'Unwritable'`);
      try {
        const err = await commands(app.infra.eventStore).signup({ accountName: 'Unwritable', email, password: 'tx-password' }).catch((e) => e);
        expect(err).to.be.instanceOf(Error);
      } finally {
        await allow();
      }
      expect(await app.infra.eventStore.readStream(userStream(email))).to.deep.equal([]);
      expect((await login(email, 'tx-password')).status).to.equal(401);
      await commands(app.infra.eventStore).signup({ accountName: 'Writable', email, password: 'tx-password' });
      await works(email, 'tx-password');
    });

    it('stream by stream (EventStoreDB): the owner is written last, so a stop after the account leaves the email free; the retry signs up', async () => {
      const email = 'owner@esdb.example';
      const failing = streamByStream(app.infra.eventStore, 2);
      const err = await commands(failing).signup({ accountName: 'Halfway', email, password: 'esdb-password' }).catch((e) => e);
      expect(err).to.be.instanceOf(Error).with.property('message', 'store stopped between two appends');
      expect(failing.appends[0]).to.match(/^account-/);
      expect(failing.appends[1]).to.equal(userStream(email));
      expect(await app.infra.eventStore.readStream(userStream(email))).to.deep.equal([]);
      expect((await login(email, 'esdb-password')).status).to.equal(401);

      const result = await commands(streamByStream(app.infra.eventStore)).signup({ accountName: 'Halfway', email, password: 'esdb-password' });
      expect((await app.infra.eventStore.readStream(userStream(email)))[0].data.accountId).to.equal(result.accountId);
      await works(email, 'esdb-password');
    });

    it('refuses a bad account name and a taken email before writing anything', async () => {
      const store = streamByStream(app.infra.eventStore);
      const bad = await commands(store).signup({ accountName: 'Bell\u0007', email: 'owner@bad-name.example', password: 'bad-password' }).catch((e) => e);
      expect(bad).to.include({ status: 400, message: 'accountName: must not contain control characters' });
      const taken = await commands(store).signup({ accountName: 'Dup', email: 'Admin@Localhost', password: 'dup-password' }).catch((e) => e);
      expect(taken).to.include({ status: 409 });
      expect(store.appends).to.deep.equal([]);
    });
  });

  describe('first boot', () => {
    let testDb: TestDatabase;
    let store: EventStore;
    beforeEach(async () => {
      testDb = await createTestDatabase();
      store = createPostgresEventStore({ connectionString: testDb.url });
    });
    afterEach(async () => {
      await store?.close();
      await testDb?.drop();
    });
    const commands = (eventStore: EventStore) =>
      createAccountCommands({ eventStore, db: testDb.db, jwt: createJwtIssuer('test-secret-test-secret-test-secret'), waitFor: async () => {} });

    it('in one transaction: a failure writing the owner leaves no account, and the next boot creates both', async () => {
      const allow = await refuseEvents(testDb.db, `NEW.type = 'UserRegistered'`);
      try {
        expect(await commands(store).bootstrap('admin@localhost', 'first-password').catch((e) => e)).to.be.instanceOf(Error);
      } finally {
        await allow();
      }
      expect(await store.readStream(accountStream(DEFAULT_ACCOUNT_ID))).to.deep.equal([]);
      expect(await commands(store).bootstrap('admin@localhost', 'first-password')).to.include({ created: true });
      const token = await commands(store).login('admin@localhost', 'first-password');
      expect(token.token).to.be.a('string');
    });

    it('stream by stream (EventStoreDB): a boot that stopped after the account is completed by the next boot', async () => {
      const halfway = streamByStream(store, 2);
      expect(await commands(halfway).bootstrap('admin@localhost').catch((e) => e)).to.be.instanceOf(Error);
      expect(await store.readStream(accountStream(DEFAULT_ACCOUNT_ID))).to.have.length(1);
      expect(await store.readStream(userStream('admin@localhost'))).to.deep.equal([]);

      const next = await commands(streamByStream(store)).bootstrap('admin@localhost');
      expect(next.created).to.equal(true);
      expect(next.generatedPassword).to.be.a('string');
      const [owner] = await store.readStream(userStream('admin@localhost'));
      expect(owner.data).to.include({ accountId: DEFAULT_ACCOUNT_ID, role: 'owner' });
      expect((await commands(store).login('admin@localhost', next.generatedPassword!)).token).to.be.a('string');
      expect(await store.readStream(accountStream(DEFAULT_ACCOUNT_ID))).to.have.length(1);
      expect(await commands(store).bootstrap('admin@localhost')).to.deep.equal({ created: false });
    });

    it('several processes booting at once: one creates, the others find it done', async () => {
      const runs = await Promise.all([1, 2, 3].map(() => commands(store).bootstrap('admin@localhost')));
      expect(runs.filter((r) => r.created)).to.have.length(1);
      const password = runs.find((r) => r.created)!.generatedPassword!;
      expect((await commands(store).login('admin@localhost', password)).token).to.be.a('string');
      expect(await store.readStream(accountStream(DEFAULT_ACCOUNT_ID))).to.have.length(1);
    });
  });
});
