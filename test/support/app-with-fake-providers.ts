import { startTestApp, type TestApp } from './app.js';
import { postmarkEnv, startFakePostmark, type FakePostmark } from './fake-postmark.js';
import { sesEnv, startFakeSes, type FakeSes } from './fake-ses.js';

export interface AppWithFakeProviders {
  app: TestApp;
  ses: FakeSes;
  pm: FakePostmark;
  /** stops the app, then the two fakes */
  close(): Promise<void>;
}

/** The whole app beside a fake SES and a fake Postmark, pointed at them (accounts still start on the sandbox). */
export async function startAppWithFakeProviders(env: Record<string, string> = {}): Promise<AppWithFakeProviders> {
  const ses = await startFakeSes();
  const pm = await startFakePostmark();
  const fakes = async () => {
    await ses.close();
    await pm.close();
  };
  const app = await startTestApp({ ...sesEnv(ses), ...postmarkEnv(pm), ...env }).catch(async (err) => {
    await fakes();
    throw err;
  });
  return {
    app,
    ses,
    pm,
    async close() {
      await app.close();
      await fakes();
    },
  };
}
