import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { eventually } from '../support/email-setup.js';
import { hookRequests, startScriptedReceiver, webhookClient, type ScriptedReceiver } from '../support/webhook-receiver.js';
import { spawnWorker, startApiOnly, webhookEnv } from '../support/webhook-service.js';
import { deliveryDiagnosis } from '../support/delivery-diagnosis.js';

const RETRY_MS = 2_000;

describe('deliver-webhook job: a worker killed between attempts', function () {
  this.timeout(90_000);
  let database: TestDatabase;
  let receiver: ScriptedReceiver;
  const stops: (() => Promise<void>)[] = [];

  before(async () => {
    database = await createTestDatabase();
    receiver = await startScriptedReceiver([503, 200]);
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await receiver?.close();
    await database?.drop();
  });

  it('the delivery continues in a new worker process after the old one was SIGKILLed: attempt 2 arrives once', async () => {
    const env = webhookEnv(database.url, { WEBHOOK_RETRY_DELAYS_MS: `${RETRY_MS},100,100,100,100`, WEBHOOK_TIMEOUT_MS: '2000' });
    const first = await spawnWorker({ ...env, LOG_LEVEL: 'warn' }); // its warnings, should attempt 1 not come
    const killed = () => first.process.exitCode !== null || first.process.signalCode !== null;
    stops.push(async () => (killed() ? undefined : first.stop()));
    const api = await startApiOnly(env);
    stops.push(api.close);
    const admin = webhookClient(api);
    const sub = await admin.subscribe(receiver.hook);
    await admin.suppress('crash@example.org');

    // Attempt 1 failed and its successor is scheduled (the effect is pending, due later): kill now.
    await admin.settled(sub.id, 'retrying', 1).catch(async (err) => {
      throw new Error(`${err.message}\n${await deliveryDiagnosis(database.db)}\nthe worker said:\n${first.output().slice(-3000)}`);
    });
    await eventually(
      () => database.db('side_effects').where('id', 'like', 'webhook:%').first('status', 'run_after'),
      (row) => row?.status === 'pending' && new Date(row.run_after).getTime() > Date.now() - RETRY_MS,
    );
    first.process.kill('SIGKILL');
    await new Promise((resolve) => (killed() ? resolve(null) : first.process.once('exit', resolve)));

    // No worker, no attempt: the second one is past due by the time a new worker starts.
    await new Promise((r) => setTimeout(r, RETRY_MS + 500));
    expect(hookRequests(receiver)).to.have.length(1);
    expect((await admin.deliveries(sub.id))[0]).to.include({ status: 'retrying', attempts: 1 });

    const second = await spawnWorker(env);
    stops.push(second.stop);
    const done = await admin.settled(sub.id, 'delivered', 2, 30_000);
    expect(done).to.include({ lastResponseStatus: 200, lastError: null });
    // a little longer: nothing more arrives (no double from the killed worker's leftovers)
    await new Promise((r) => setTimeout(r, 1_000));
    const requests = hookRequests(receiver);
    expect(requests.map((r) => r.headers['x-service-attempt'])).to.deep.equal(['1', '2']);
    expect(JSON.parse(requests[1].body).id).to.equal(JSON.parse(requests[0].body).id);
    const history = await api.infra.eventStore.readStream(`delivery-${done.id}`);
    expect(history.map((e) => e.type)).to.deep.equal(['WebhookDeliveryScheduled', 'WebhookAttemptFailed', 'WebhookDelivered']);
  });
});
