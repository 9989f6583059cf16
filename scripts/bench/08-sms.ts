import { performance } from 'node:perf_hooks';
import { SegmentedMessage } from 'sms-segments-calculator';
import { createSnsSmsProvider } from '../../src/adapters/sms/sns.js';
import { countSmsSegments } from '../../src/domain/sms/segments.js';
import { startTestApp } from '../../test/support/app.js';
import { readyToSend } from '../../test/support/email-setup.js';
import { FAKE_AWS_CREDENTIALS, startFakeSns } from '../../test/support/fake-sns.js';
import { readyToSendSms } from '../../test/support/sms-setup.js';
import { useFakeAwsCredentials } from '../../test/support/aws-credentials.js';
import { call, measureRates, scaled, type BenchModule } from './lib.js';

/**
 * Issue 9: segment counting (next to `sms-segments-calculator` on the same bodies), accepted SMS sends
 * per second (next to transactional email sends in the same app), and an opt-out sync of N numbers
 * through the real SDK against the local SNS (next to only listing them).
 */
const bench: BenchModule = {
  name: 'sms',
  async run({ scale, log }) {
    const bodies = Array.from({ length: 200 }, (_, i) =>
      i % 2 ? `Your code is ${i}. Reply STOP to opt out {€}`.repeat(1 + (i % 8)) : `Grüße 😜 👨‍👩‍👧 order ${i} ç`.repeat(1 + (i % 6)),
    );
    const countFor = (fn: (b: string) => unknown, ms: number) => {
      let n = 0;
      const end = performance.now() + ms;
      const start = performance.now();
      while (performance.now() < end) fn(bodies[n++ % bodies.length]);
      return n / ((performance.now() - start) / 1000);
    };
    const ours = countFor((b) => countSmsSegments(b), 1000);
    const pkg = countFor((b) => new SegmentedMessage(b).segmentsCount, 1000);
    log(`segments: ${Math.round(ours)}/s, package ${Math.round(pkg)}/s`);

    const restore = useFakeAwsCredentials();
    const optOuts = scaled(2_000, scale, 100);
    const fake = await startFakeSns({ optedOut: Array.from({ length: optOuts }, (_, i) => `+1202555${String(i).padStart(4, '0')}`) });
    const app = await startTestApp({ SMS_PROVIDER: 'sns', AWS_ENDPOINT_URL_SNS: fake.url });
    try {
      await app.request('PATCH', '/api/settings', { token: app.adminToken, body: { dailySendCap: 100_000_000 } });
      const sms = await readyToSendSms(app, { scopes: ['sms:send'] });
      const email = await readyToSend(app, { scopes: ['send'] });
      const { sms: smsRate, email: emailRate } = await measureRates({
        sms: (i) => call(app.baseUrl, 'POST', '/api/send/sms', { headers: { 'x-api-key': sms.key }, body: { to: '+14155550100', body: `Code ${i}` } }),
        email: (i) =>
          call(app.baseUrl, 'POST', '/api/send/transactional', {
            headers: { 'x-api-key': email.key },
            body: { to: 'r@example.org', fromEmail: email.from, subject: `Code ${i}`, html: '<p>x</p>', text: 'x' },
          }),
      });
      log(`sends: sms ${Math.round(smsRate)}/s, email ${Math.round(emailRate)}/s`);

      const provider = createSnsSmsProvider({ region: 'us-east-1', endpoint: fake.url, credentials: FAKE_AWS_CREDENTIALS });
      let t = performance.now();
      for (let token: string | undefined, first = true; first || token; first = false) token = (await provider.listOptedOut(token)).nextToken;
      const listSeconds = (performance.now() - t) / 1000;
      t = performance.now();
      const res = await app.request('POST', '/api/sms/sync-optouts', { token: app.adminToken });
      const syncSeconds = (performance.now() - t) / 1000;
      if (res.body?.synced !== optOuts) throw new Error(`sync: ${res.status} ${JSON.stringify(res.body)}`);
      log(`opt-out sync of ${optOuts}: ${syncSeconds.toFixed(1)} s (listing alone ${listSeconds.toFixed(2)} s)`);

      return [
        { name: 'segment counts', value: ours, unit: 'bodies/s', baseline: { name: 'sms-segments-calculator', value: pkg } },
        { name: 'POST /api/send/sms accepted', value: smsRate, unit: 'req/s', baseline: { name: 'POST /api/send/transactional', value: emailRate }, aim: '≈ baseline' },
        { name: `opt-out sync (${optOuts} new numbers)`, value: optOuts / syncSeconds, unit: 'numbers/s', baseline: { name: 'listing them only', value: optOuts / listSeconds } },
      ];
    } finally {
      await app.close();
      await fake.close();
      restore();
    }
  },
};
export default bench;
