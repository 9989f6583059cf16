import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * Issue 25: a signup whose account could not be written left the email taken, login working and
 * every admin call answering 503 for good. The account and its owner are now written together.
 */
describe('POST /api/auth/signup writes the account and its owner together', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ ALLOW_SIGNUP: 'true' });
  });
  after(async () => app?.close());

  const signup = (accountName: string, email: string) => app.request('POST', '/api/auth/signup', { body: { accountName, email, password: 'signup-password' } });
  const login = (email: string) => app.request('POST', '/api/auth/login', { body: { email, password: 'signup-password' } });

  it('an account that cannot be written takes no email: login is refused and the same email signs up again with a working account', async () => {
    const email = 'owner@unwritable.example';
    // The reported failure: the AccountCreated append failed (here the database refuses it).
    await app.infra.db.raw(`
      CREATE FUNCTION test_refuse_account() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'AccountCreated' AND NEW.data->>'name' = 'Unwritable' THEN RAISE EXCEPTION 'test: account cannot be written'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_account BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_refuse_account();`);
    try {
      const failed = await signup('Unwritable', email);
      expect(failed.status).to.equal(500);
      expect(failed.body).to.deep.equal({ message: 'Internal Server Error', error: 'Internal Server Error', statusCode: 500 });
    } finally {
      await app.infra.db.raw('DROP TRIGGER test_refuse_account ON events; DROP FUNCTION test_refuse_account()');
    }
    expect((await login(email)).status).to.equal(401);

    const again = await signup('Writable', email);
    expect(again.status).to.equal(201);
    const settings = await app.request('GET', '/api/settings', { token: again.body.token });
    expect(settings.status).to.equal(200);
    const token = (await login(email)).body.token;
    expect((await app.request('GET', '/api/api-keys', { token })).status).to.equal(200);
  });

  it('refuses an account name with control characters with a 400 naming the field, and writes nothing', async () => {
    const email = 'owner@control.example';
    for (const name of ['Tab\there', 'Escape\u001b[31m', 'Line\u2028ok\u0085']) {
      const res = await signup(name, email);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ message: 'accountName: must not contain control characters', error: 'Bad Request', statusCode: 400 });
    }
    expect((await login(email)).status).to.equal(401);
    const ok = await signup('Control Ltd', email);
    expect(ok.status).to.equal(201);
    expect((await app.request('GET', '/api/settings', { token: ok.body.token })).status).to.equal(200);
  });
});
