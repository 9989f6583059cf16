import type { Config } from '../../config/env.js';
import type { Db } from '../db/knex.js';
import type { SmsProvider } from '../../ports/sms-provider.js';
import { createSandboxSmsProvider } from './sandbox.js';
import { createSnsSmsProvider } from './sns.js';

export function createSmsProvider(kind: 'sns' | 'sandbox', deps: { db: Db; config: Config }): SmsProvider {
  return kind === 'sns'
    ? // One SDK attempt per call: a retry after a Publish that SNS accepted but answered late would be
      // a second SMS; the send worker's own schedule retries instead, recorded on the message stream.
      createSnsSmsProvider({ region: deps.config.AWS_REGION, endpoint: deps.config.AWS_ENDPOINT_URL_SNS, maxAttempts: 1 })
    : createSandboxSmsProvider({ db: deps.db });
}
