import { readFileSync } from 'node:fs';

// The receiver's guide (docs/webhooks.md), loaded from the page itself and run against real deliveries:
// the code a receiver copies is the code under test, so the two cannot drift apart.
const page = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
const code = /^## Verifying a delivery$[\s\S]*?^```js$\n([\s\S]*?)^```$/m.exec(page)?.[1];
if (!code) throw new Error('docs/webhooks.md has no ```js block under "## Verifying a delivery"');
const guide = await import(`data:text/javascript,${encodeURIComponent(code)}`);

export const verifyWebhook: (secret: string, headers: Record<string, any>, rawBody: string) => 'ok' | 'stale' | 'bad signature' | 'duplicate' = guide.verifyWebhook;
