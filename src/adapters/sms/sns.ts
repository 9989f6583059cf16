import { ListPhoneNumbersOptedOutCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { ProviderError } from '../../ports/email-provider.js';
import type { SmsProvider } from '../../ports/sms-provider.js';
import { toProviderError } from '../email/ses.js';

/** SMS through AWS SNS Publish (Transactional, with the account's origination number). */
export function createSnsSmsProvider(options: { region: string; endpoint?: string; credentials?: { accessKeyId: string; secretAccessKey: string } }): SmsProvider {
  const client = new SNSClient({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  return {
    name: 'sns',
    async send(sms) {
      try {
        const out = await client.send(
          new PublishCommand({
            PhoneNumber: sms.to,
            Message: sms.body,
            MessageAttributes: {
              'AWS.SNS.SMS.SMSType': { DataType: 'String', StringValue: 'Transactional' },
              'AWS.MM.SMS.OriginationNumber': { DataType: 'String', StringValue: sms.originationNumber },
            },
          }),
        );
        if (!out.MessageId) throw new ProviderError('SNS returned no MessageId', true);
        return { providerMessageId: out.MessageId };
      } catch (err) {
        throw err instanceof ProviderError ? err : toProviderError(err);
      }
    },
    async listOptedOut(nextToken) {
      try {
        const out = await client.send(new ListPhoneNumbersOptedOutCommand({ nextToken }));
        return { phoneNumbers: out.phoneNumbers ?? [], ...(out.nextToken ? { nextToken: out.nextToken } : {}) };
      } catch (err) {
        throw toProviderError(err);
      }
    },
  };
}
