import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ProviderEventIngest } from '../../commands/ingest-provider-events.js';
import { AppError, badRequest, forbidden, unauthorized } from '../../domain/errors.js';
import { parsePostmarkEvent } from '../../domain/provider-events/postmark-events.js';
import type { KeyedDigest } from '../../domain/provider-events/provider-event-ids.js';
import { parseSesEvent } from '../../domain/provider-events/ses-events.js';
import { admitSnsMessage } from '../../domain/provider-events/sns-admission.js';
import { SnsVerificationError } from '../../adapters/sns-verify/sns-verification-error.js';
import { parseJsonText } from '../json-depth.js';
import { toStorable } from '../reject-nul.js';
import { defineRoute } from '../route.js';

export interface SnsGate {
  /** throws when the message's signature or certificate URL does not check out */
  verify(message: Record<string, unknown>): Promise<void>;
  /** GETs SubscribeURL (after verification) */
  confirmSubscription(message: Record<string, unknown>): Promise<void>;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const ingestResult = z.object({ recorded: z.number(), pending: z.number() });

/** Inbound provider events: SES through SNS (signed), Postmark webhooks (HTTP Basic). */
export function createProviderEventRoutes(deps: {
  ingest: ProviderEventIngest;
  sns: SnsGate;
  /** SNS_TOPIC_ARNS: the topics whose messages we act on; undefined accepts any */
  snsTopicArns?: readonly string[];
  postmarkCredentials?: { user: string; password: string };
  /** tells a Postmark click's link apart in its event id without keeping it there */
  linkDigest: KeyedDigest;
  /** the clock SNS Timestamps are judged by */
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  return [
    defineRoute({
      method: 'post',
      path: '/api/provider-events/ses',
      summary: 'SNS HTTP(S) notifications carrying SES events (signature versions 1 and 2)',
      tag: 'provider-events',
      auth: { kind: 'public' },
      bodyType: 'text',
      responses: {
        200: { description: 'Recorded (or a subscription confirmed)', schema: ingestResult },
        400: { description: 'Not an SNS message' },
        403: { description: 'Signature or certificate URL refused, topic not accepted, or Timestamp outside the window' },
      },
      async handler({ req }) {
        let message: Record<string, unknown>;
        const text = String(req.body ?? '');
        try {
          message = parseJsonText(text, 'request body') as Record<string, unknown>;
        } catch (err) {
          if (err instanceof AppError) throw err;
          throw badRequest('body is not an SNS message (JSON)');
        }
        if (!message || typeof message !== 'object' || typeof message.Type !== 'string') throw badRequest('body is not an SNS message');
        // Before the signature, so a message we would refuse anyway never makes us fetch a certificate
        // (or GET a SubscribeURL). 403 like a bad signature: these are all "not a message we trust",
        // and SNS does not retry a 4xx, which is right for a message no retry would make acceptable.
        const admission = admitSnsMessage(message, { allowedTopics: deps.snsTopicArns, now: now() });
        if (!admission.ok) throw forbidden(`SNS message refused: ${admission.reason}`);
        try {
          await deps.sns.verify(message);
        } catch (err) {
          if (err instanceof AppError) throw err;
          throw forbidden(`SNS message refused: ${err instanceof Error ? err.message : String(err)}`);
        }
        if (message.Type === 'SubscriptionConfirmation') {
          try {
            await deps.sns.confirmSubscription(message);
          } catch (err) {
            // Our check refused the SubscribeURL (403), or AWS did not confirm it (502): never a bare 500.
            const detail = err instanceof Error ? err.message : String(err);
            throw new AppError(err instanceof SnsVerificationError ? 403 : 502, `SNS subscription not confirmed: ${detail}`);
          }
          return { status: 200, body: { recorded: 0, pending: 0 } };
        }
        if (message.Type !== 'Notification') return { status: 200, body: { recorded: 0, pending: 0 } };
        let payload: unknown;
        const inner = String(message.Message);
        try {
          payload = parseJsonText(inner, 'SNS Message');
        } catch (err) {
          if (err instanceof AppError) throw err;
          throw badRequest('SNS Message is not an SES event (JSON)');
        }
        // PostgreSQL stores no U+0000 nor unpaired surrogate: one inside a verified event is kept as U+FFFD
        payload = toStorable(payload, 'SNS Message');
        return { status: 200, body: await deps.ingest.ingest(parseSesEvent(String(message.MessageId), payload)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/provider-events/postmark',
      summary: 'Postmark webhooks (Delivery, Bounce, SpamComplaint, Open, Click, SubscriptionChange), HTTP Basic',
      tag: 'provider-events',
      auth: { kind: 'public' },
      ownCredentials: 'postmarkBasic',
      responses: {
        200: { description: 'Recorded', schema: ingestResult },
        401: { description: 'Missing or wrong credentials' },
      },
      replaceUnstorable: true,
      // before the body: a caller without the credentials gets a 401 whatever it sent, unparsed
      beforeBody(req, res) {
        const creds = deps.postmarkCredentials;
        const header = req.get('authorization') ?? '';
        const match = /^Basic\s+(.+)$/i.exec(header);
        const given = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
        // Without configured credentials nothing is accepted: an open endpoint would let anyone suppress addresses.
        if (!creds || !safeEqual(given, `${creds.user}:${creds.password}`)) {
          res.set('WWW-Authenticate', 'Basic realm="provider-events"');
          throw unauthorized('invalid provider webhook credentials');
        }
      },
      async handler({ body }) {
        return { status: 200, body: await deps.ingest.ingest(parsePostmarkEvent(body, deps.linkDigest)) };
      },
    }),
  ];
}
