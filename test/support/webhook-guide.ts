import { readFileSync } from 'node:fs';

// The README's receiver guide, loaded from the README itself and run against real deliveries: the
// code a receiver copies is the code under test, so the two cannot drift apart.
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const code = /^## Receiving webhooks$[\s\S]*?^```js$\n([\s\S]*?)^```$/m.exec(readme)?.[1];
if (!code) throw new Error('README.md has no ```js block under "## Receiving webhooks"');
const guide = await import(`data:text/javascript,${encodeURIComponent(code)}`);

export const verifyWebhook: (secret: string, headers: Record<string, any>, rawBody: string) => 'ok' | 'stale' | 'bad signature' | 'duplicate' = guide.verifyWebhook;
