import type { Db } from '../db/knex.js';
import type { SmsProvider } from '../../ports/sms-provider.js';

const PAGE = 100;

/** The sandbox SMS provider: records SMS in `sandbox_sms`, never delivers; opt-outs come from `sandbox_sms_optouts`. */
export function createSandboxSmsProvider(deps: { db: Db }): SmsProvider {
  return {
    name: 'sandbox',
    async send(sms) {
      await deps
        .db('sandbox_sms')
        .insert({ message_id: sms.messageId, to_number: sms.to, from_number: sms.originationNumber, body: sms.body })
        .onConflict('message_id')
        .ignore();
      return { providerMessageId: `sandbox-${sms.messageId}` };
    },
    async listOptedOut(nextToken) {
      const rows = await deps
        .db('sandbox_sms_optouts')
        .modify((q) => {
          if (nextToken) q.where('phone_number', '>', Buffer.from(nextToken, 'base64url').toString('utf8'));
        })
        .orderBy('phone_number')
        .limit(PAGE + 1)
        .select('phone_number');
      const page = rows.slice(0, PAGE).map((r: { phone_number: string }) => r.phone_number);
      return {
        phoneNumbers: page,
        ...(rows.length > PAGE ? { nextToken: Buffer.from(page[page.length - 1]).toString('base64url') } : {}),
      };
    },
  };
}

export async function addSandboxOptOuts(db: Db, numbers: string[]): Promise<void> {
  if (numbers.length) await db('sandbox_sms_optouts').insert(numbers.map((phone_number) => ({ phone_number }))).onConflict('phone_number').ignore();
}
