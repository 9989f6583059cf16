import { z } from 'zod';
import type { SmsOptOutSync } from '../../commands/sync-sms-optouts.js';
import { defineRoute } from '../route.js';
import { accountOf } from './principal-helpers.js';

export function createSmsOptOutRoutes(deps: { optOuts: SmsOptOutSync }) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/sms/sync-optouts',
      summary: 'Force an SMS opt-out sync now (it also runs in the background)',
      tag: 'sms',
      auth: { kind: 'jwt' },
      responses: {
        200: {
          description: "Suppressions this sync added to the caller's account, and the numbers opted out at the provider. A call that finds a sync running waits for it and answers its result.",
          schema: z.object({ synced: z.number().int(), total: z.number().int() }),
        },
        401: { description: 'No dashboard session' },
        500: { description: 'Provider error: the opt-out list could not be read' },
      },
      async handler({ principal }) {
        return { status: 200, body: await deps.optOuts.sync(accountOf(principal)) };
      },
    }),
  ];
}
