import type http from 'node:http';
import { startLocalReceiver, type LocalReceiver, type ReceivedRequest } from '../adapters/webhooks/local-receiver.js';
import type { TestApp } from './app.js';
import { eventually } from './email-setup.js';

/** What the receiver answers, request by request; the last entry repeats. A number is a status code. */
export type Reply = number | 'hang' | 'drop' | ((req: http.IncomingMessage, res: http.ServerResponse) => void);

export interface ScriptedReceiver extends LocalReceiver {
  /** the hook URL to subscribe */
  hook: string;
  /** replaces what the next requests get */
  script(replies: Reply[]): void;
}

/**
 * A local webhook endpoint at `/hook` whose answers follow a script: `[503, 503, 200]` fails twice,
 * then delivers. `hang` never answers (a timeout), `drop` destroys the socket (a network error).
 */
export async function startScriptedReceiver(replies: Reply[] = [200]): Promise<ScriptedReceiver> {
  let queue = [...replies];
  const receiver = await startLocalReceiver({
    '/hook': (req, res) => {
      const reply = queue.length > 1 ? queue.shift()! : queue[0];
      if (typeof reply === 'function') return reply(req, res);
      if (reply === 'hang') return;
      if (reply === 'drop') return void req.socket.destroy();
      if (reply >= 300 && reply < 400) res.setHeader('location', `${receiver.url}/hook`);
      res.writeHead(reply, { 'content-type': 'text/plain' }).end(`status ${reply}`);
    },
  });
  return {
    ...receiver,
    hook: `${receiver.url}/hook`,
    script(next) {
      queue = [...next];
    },
  };
}

/** Webhook calls as one account's admin (a JWT): the default account's, or a fresh one's. */
export function webhookClient(app: Pick<TestApp, 'request' | 'adminToken'>, token = app.adminToken) {
  const call = (method: string, path: string, body?: unknown) => app.request(method, path, { token, body });
  const client = {
    token,
    call,
    async subscribe(url: string, events?: string[]): Promise<{ id: string; secret: string; url: string; events: string[] }> {
      const res = await call('POST', '/api/webhooks', { url, ...(events ? { events } : {}) });
      if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async suppress(email: string): Promise<void> {
      const res = await call('POST', '/api/suppressions', { email });
      if (res.status !== 201) throw new Error(`suppress: ${res.status} ${JSON.stringify(res.body)}`);
    },
    async lift(email: string): Promise<void> {
      const res = await call('DELETE', `/api/suppressions/${encodeURIComponent(email)}`);
      if (res.status !== 200) throw new Error(`lift: ${res.status} ${JSON.stringify(res.body)}`);
    },
    async deliveries(subscriptionId: string): Promise<any[]> {
      const res = await call('GET', `/api/webhooks/${subscriptionId}/deliveries`);
      if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.items;
    },
    /** Waits until the subscription's only delivery is in `status` after `attempts`, and returns it. */
    async settled(subscriptionId: string, status: string, attempts: number, timeoutMs = 15_000) {
      const [item] = await eventually(
        () => client.deliveries(subscriptionId),
        (items) => items.length === 1 && items[0].status === status && items[0].attempts === attempts,
        timeoutMs,
      );
      return item;
    },
  };
  return client;
}

let accounts = 0;
/** A new account (signup) and its owner's client: its suppressions fan out to its own subscriptions only. */
export async function newAccount(app: TestApp) {
  const n = ++accounts;
  const res = await app.request('POST', '/api/auth/signup', {
    body: { accountName: `hooks-${n}-${Date.now()}`, email: `owner${n}.${Date.now()}@example.com`, password: 'correct-horse-battery' },
  });
  if (res.status !== 201) throw new Error(`signup: ${res.status} ${JSON.stringify(res.body)}`);
  return { accountId: res.body.accountId as string, ...webhookClient(app, res.body.token) };
}

export const hookRequests = (receiver: LocalReceiver): ReceivedRequest[] => receiver.requests.filter((r) => r.path === '/hook');
