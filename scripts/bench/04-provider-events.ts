import { startTestApp } from '../../test/support/app.js';
import { eventually, readyToSend, switchProvider } from '../../test/support/email-setup.js';
import { sesEnv, startFakeSes } from '../../test/support/fake-ses.js';
import { sesEvent, type SesKind } from '../../test/support/provider-events-payloads.js';
import { SNS_TEST_TOPIC_ARN, signedSnsNotification, startSnsCertServer } from '../../test/support/sns-signing.js';
import { call, measureRate, measureThroughput, scaled, type BenchModule } from './lib.js';

/**
 * Issue 5: signed SNS notifications ingested per second through POST /api/provider-events/ses, the
 * certificate cache warm, next to GET /healthz in the same run. Every notification is a new SES event
 * (its own SNS MessageId) on one of `messages` sent messages, so each one verifies a signature, reads
 * and appends to a message stream. Envelopes are signed before the clock starts.
 */
const bench: BenchModule = {
  name: 'provider events ingest',
  async run({ scale, log }) {
    const certs = await startSnsCertServer();
    // SES events count only for messages sent through SES (and from a listed topic)
    const ses = await startFakeSes();
    const app = await startTestApp({ SNS_CERT_URL_PATTERN: certs.pattern.source, SNS_TOPIC_ARNS: SNS_TEST_TOPIC_ARN, ...sesEnv(ses) });
    try {
      const { key, from } = await readyToSend(app);
      await switchProvider(app, 'ses', { ses });
      const messages = scaled(300, scale, 10);
      const total = scaled(6000, scale, 100);
      const ids: { id: string; to: string }[] = [];
      for (let i = 0; i < messages; i++) {
        const to = `bench${i}@example.org`;
        const res = await call(app.baseUrl, 'POST', '/api/send/transactional', {
          headers: { 'x-api-key': key },
          body: { to, fromEmail: from, subject: 'Bench', html: '<p>Bench</p>', text: 'Bench' },
        });
        if (res.status !== 201) throw new Error(`send answered ${res.status}`);
        ids.push({ id: (res.body as any).messageLogId, to });
      }
      const providerIds = new Map<string, string>();
      await eventually(
        async () => {
          const rows = await app.infra.db('provider_message_ids').whereIn('message_id', ids.map((m) => m.id));
          for (const r of rows) providerIds.set(r.message_id, r.provider_message_id);
          return providerIds.size;
        },
        (n) => n === messages,
        60_000,
      );
      log(`${messages} messages sent and accepted; signing ${total} notifications`);

      const kinds: SesKind[] = ['Delivery', 'Open', 'Click'];
      const envelopes = Array.from({ length: total }, (_, i) => {
        const m = ids[i % messages];
        const kind = kinds[Math.floor(i / messages) % kinds.length];
        const payload = sesEvent(kind, { msgId: m.id, sesMessageId: providerIds.get(m.id)!, recipients: [m.to] });
        return JSON.stringify(signedSnsNotification(payload, { certUrl: certs.certUrl, version: i % 2 ? '1' : '2' }));
      });
      // Signing blocked the event loop for a while: let the server's keep-alive timers close idle
      // sockets now, so the next request does not pick one that is being closed.
      await new Promise((r) => setTimeout(r, 200));
      const post = async (body: string) => {
        const res = await call(app.baseUrl, 'POST', '/api/provider-events/ses', { body, headers: { 'content-type': 'text/plain; charset=UTF-8' } });
        if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(res.body)}`);
        return res.body as { recorded: number };
      };
      // warms the certificate cache (one fetch) before the clock starts
      await post(JSON.stringify(signedSnsNotification(sesEvent('Send', { sesMessageId: 'warm' }), { certUrl: certs.certUrl })));

      // /healthz before and after the ingest run, averaged: the machine's load drifts during a run
      const healthzRate = () => measureRate(() => call(app.baseUrl, 'GET', '/healthz'), { durationMs: 3_000 });
      const healthzBefore = await healthzRate();
      let recorded = 0;
      const ingest = await measureThroughput(total, async (i) => {
        // not `recorded += await …`: that reads `recorded` before the await and loses concurrent updates
        const r = await post(envelopes[i]);
        recorded += r.recorded;
      }, 32);
      const healthzAfter = await healthzRate();
      const healthz = (healthzBefore + healthzAfter) / 2;
      log(`GET /healthz ${Math.round(healthzBefore)} req/s before, ${Math.round(healthzAfter)} after`);
      if (recorded !== total) throw new Error(`only ${recorded} of ${total} notifications were recorded`);
      const certFetches = certs.requests.filter((p) => p.endsWith('.pem')).length;
      log(`${total} notifications in ${ingest.seconds.toFixed(2)} s, 32 concurrent; certificate fetched ${certFetches}×`);
      return [
        {
          name: 'signed SNS events ingested (Delivery/Open/Click)',
          value: ingest.perSecond,
          unit: 'events/s',
          baseline: { name: 'GET /healthz (req/s, mean of before and after)', value: healthz },
          aim: '≥ 1,000 events/s',
        },
      ];
    } finally {
      await app.close();
      await ses.close();
      await certs.close();
    }
  },
};
export default bench;
