import { z } from 'zod';
import type { SmsOptOutSync } from '../../commands/sync-sms-optouts.js';
import { defineRoute } from '../route.js';

export function createSmsOptOutRoutes(deps: { optOuts: SmsOptOutSync }) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/sms/sync-optouts',
      summary: 'Force an SMS opt-out sync now (it also runs in the background)',
      tag: 'sms',
      auth: { kind: 'jwt' },
      responses: { 200: { description: 'Numbers newly suppressed, and opted out in all', schema: z.object({ synced: z.number(), total: z.number() }) } },
      async handler() {
        return { status: 200, body: await deps.optOuts.sync() };
      },
    }),
  ];
}
