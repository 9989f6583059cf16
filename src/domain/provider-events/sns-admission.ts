/**
 * Which verified SNS messages we act on. A valid signature proves only that AWS sent the message, not
 * that it comes from our topic: anyone can create a topic, subscribe our endpoint and have AWS sign
 * whatever it publishes. And a signed message stays valid forever, so without a time window a captured
 * one could be replayed at will.
 */

/** SNS stops retrying an HTTP(S) delivery one hour after the first attempt at most: a genuine delivery is never older. */
export const SNS_MAX_AGE_MS = 3_600_000;
/** Clocks differ a little; a message dated further ahead than this was not sent by SNS now. */
export const SNS_MAX_AHEAD_MS = 5 * 60_000;

export interface SnsAdmissionPolicy {
  /** SNS_TOPIC_ARNS; undefined accepts any topic (the operator was warned at start) */
  allowedTopics?: readonly string[];
  now: Date;
}

export type SnsAdmission = { ok: true } | { ok: false; reason: string };

/** Whether an SNS message of any Type may be acted on: its topic is one of ours and its Timestamp is recent. */
export function admitSnsMessage(message: { TopicArn?: unknown; Timestamp?: unknown }, policy: SnsAdmissionPolicy): SnsAdmission {
  if (policy.allowedTopics && !(typeof message.TopicArn === 'string' && policy.allowedTopics.includes(message.TopicArn))) {
    return { ok: false, reason: `topic ${String(message.TopicArn)} is not accepted` };
  }
  // Date.parse accepts much more than ISO 8601; SNS always sends `2026-01-01T00:00:00.000Z`.
  const sentAt = typeof message.Timestamp === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(message.Timestamp) ? Date.parse(message.Timestamp) : NaN;
  if (Number.isNaN(sentAt)) return { ok: false, reason: 'Timestamp is not a date' };
  const age = policy.now.getTime() - sentAt;
  if (age > SNS_MAX_AGE_MS) return { ok: false, reason: 'Timestamp is more than one hour old' };
  if (age < -SNS_MAX_AHEAD_MS) return { ok: false, reason: 'Timestamp is in the future' };
  return { ok: true };
}
