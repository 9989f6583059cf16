import type { Config } from '../../config/env.js';
import type { Db } from '../db/knex.js';
import type { SmsProvider } from '../../ports/sms-provider.js';
import { createSandboxSmsProvider } from './sandbox.js';
import { createSnsSmsProvider } from './sns.js';

export function createSmsProvider(kind: 'sns' | 'sandbox', deps: { db: Db; config: Config }): SmsProvider {
  return kind === 'sns'
    ? createSnsSmsProvider({ region: deps.config.AWS_REGION, endpoint: deps.config.AWS_ENDPOINT_URL_SNS })
    : createSandboxSmsProvider({ db: deps.db });
}
