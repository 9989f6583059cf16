import { ListPhoneNumbersOptedOutCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { ProviderError } from '../../ports/email-provider.js';
import { missingAwsCredentials } from '../aws-credentials.js';
import type { SmsProvider } from '../../ports/sms-provider.js';
import { snsProviderError } from './sns-errors.js';

export interface SnsOptions {
  region: string;
  /** a local or regional endpoint; the SDK also reads AWS_ENDPOINT_URL_SNS itself */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** SDK attempts per call (its own retries for throttling and 5xx); the send job retries on top */
  maxAttempts?: number;
  /** per-request timeout: a hung call must not hold a message's send lease for minutes */
  requestTimeoutMs?: number;
}

/** Carries our message id to SNS, so a Publish can be matched to its message log record. */
export const MESSAGE_ID_ATTRIBUTE = 'CourierMessageId';

/** SMS through AWS SNS Publish (Transactional, with the account's origination number). */
export function createSnsSmsProvider(options: SnsOptions): SmsProvider {
  const client = new SNSClient({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    requestHandler: { requestTimeout: options.requestTimeoutMs ?? 15_000, connectionTimeout: 5_000, throwOnRequestTimeout: true },
  });
  return {
    name: 'sns',
    missingCredentials: () => missingAwsCredentials(client),
    async send(sms) {
      try {
        const out = await client.send(
          new PublishCommand({
            PhoneNumber: sms.to,
            Message: sms.body,
            MessageAttributes: {
              'AWS.SNS.SMS.SMSType': { DataType: 'String', StringValue: 'Transactional' },
              'AWS.MM.SMS.OriginationNumber': { DataType: 'String', StringValue: sms.originationNumber },
              [MESSAGE_ID_ATTRIBUTE]: { DataType: 'String', StringValue: sms.messageId },
            },
          }),
        );
        if (!out.MessageId) throw new ProviderError('SNS returned no MessageId', true);
        return { providerMessageId: out.MessageId };
      } catch (err) {
        throw snsProviderError(err);
      }
    },
    async listOptedOut(nextToken) {
      try {
        const out = await client.send(new ListPhoneNumbersOptedOutCommand({ nextToken }));
        return { phoneNumbers: out.phoneNumbers ?? [], ...(out.nextToken ? { nextToken: out.nextToken } : {}) };
      } catch (err) {
        throw snsProviderError(err);
      }
    },
  };
}
