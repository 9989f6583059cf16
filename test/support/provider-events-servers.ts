import { startTestApp, type TestApp } from './app.js';
import { sesEnv, startFakeSes, type FakeSes } from './fake-ses.js';
import { startPostmarkApi, type PostmarkApi } from './provider-events-postmark-api.js';
import { SNS_TEST_TOPIC_ARN, startSnsCertServer, type SnsCertServer } from './sns-signing.js';

/** The HTTP Basic credentials the app takes Postmark's webhooks with. */
export const POSTMARK_HOOK = { user: 'pm-hook', password: 'pm-secret-password' };

export interface ProviderEventsServers {
  app: TestApp;
  certs: SnsCertServer;
  ses: FakeSes;
  api: PostmarkApi;
  close(): Promise<void>;
}

/**
 * An app that sends through both providers (a fake SES v2 and a Postmark API of the tests) and takes
 * both kinds of reports: SNS notifications signed with certificates served locally, and Postmark's
 * webhooks with POSTMARK_HOOK's credentials.
 */
export async function startProviderEventsServers(): Promise<ProviderEventsServers> {
  const certs = await startSnsCertServer();
  const ses = await startFakeSes();
  const api = await startPostmarkApi();
  const app = await startTestApp({
    POSTMARK_WEBHOOK_USER: POSTMARK_HOOK.user,
    POSTMARK_WEBHOOK_PASSWORD: POSTMARK_HOOK.password,
    POSTMARK_SERVER_TOKEN: 'server-token',
    POSTMARK_API_URL: api.url,
    SNS_CERT_URL_PATTERN: certs.pattern.source,
    SNS_TOPIC_ARNS: SNS_TEST_TOPIC_ARN,
    ...sesEnv(ses),
  });
  return {
    app,
    certs,
    ses,
    api,
    async close() {
      await app.close();
      await api.close();
      await ses.close();
      await certs.close();
    },
  };
}
