import type { RecordedEvent } from '../../ports/event-store.js';
import type { NormalizedProviderEvent } from './normalized.js';

/**
 * A provider event's id is recorded in clear (`data.providerEventId`, and as the command id and cause
 * in the metadata of what it writes): it is what makes a redelivered report a no-op, after an erasure
 * too. So it holds nothing of the person: the provider's own ids, and where those are not unique per
 * report (a Postmark click: one per link of a message), a keyed digest of the rest, which no one can
 * check a guess against without ENCRYPTION_KEY (as the person's keyed hash).
 *
 * Earlier versions ended some ids with the recipient's address or the clicked link. These patterns
 * find those and keep the part before it (group 1), the first that matches; they are regular
 * expressions that JavaScript and PostgreSQL (its AREs) read alike, so a read model can apply them in
 * SQL too. No id this version makes matches one, nor does an id they have already shortened (a row
 * written from an event read so is shortened again by an erasure, and must come out the same).
 */
const ISO_TIME = '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})?';
export const FORMER_PERSONAL_IDS: readonly string[] = [
  // pm:delivery:<MessageID>:<recipient>
  '^(pm:delivery:[^:]*):.+$',
  // pm:click:<MessageID>:<ReceivedAt>:<link>, the time kept: it tells apart the clicks of one message.
  // A link starts with no digit (http…, or '' for one that was no string), which no colon inside the
  // time is followed by: the time is cut off whole.
  `^(pm:click:[^:]*:${ISO_TIME}):([^0-9].*)?$`,
  // any other (a ReceivedAt that was no ISO time, `undefined` when absent): the message's id alone,
  // unless all that follows it is a time (an id already shortened by the rule above)
  `^(pm:click:[^:]*):(?!${ISO_TIME}$).*:.*$`,
  // ses:feedback:<feedbackId>:<recipient>
  '^(ses:feedback:[^:]*):.+$',
  // ses:<SNS MessageId>:<recipient> (not ses:<SNS MessageId>:send, which names no one)
  '^(ses:[^:]*):.*@.*$',
];
const FORMER = FORMER_PERSONAL_IDS.map((pattern) => new RegExp(pattern, 's'));

/** A provider event id without the address or link an earlier version ended it with; any other id as it is. */
export function withoutPersonalPart(id: string): string {
  if (!id.startsWith('pm:') && !id.startsWith('ses:')) return id;
  const former = FORMER.find((re) => re.test(id));
  return former ? id.replace(former, '$1') : id;
}

/** A keyed digest (ENCRYPTION_KEY's): the same text gives the same digest, and a guess cannot be checked without the key. */
export type KeyedDigest = (text: string) => string;

/**
 * The event's metadata as every reader gets it: a command id or cause that is a provider event id an
 * earlier version ended with an address or link, without it. Nothing decides on those but a command
 * run again under the same id (executeTogether), and a report an earlier version parked is applied
 * again under the shortened id (`parkedReport`). In the data, `providerEventId` keeps what it was
 * recorded with while the event's personal fields can be read (it tells a redelivery apart, see
 * `formerId`), and loses it with them (`redact`); the metadata is shortened always, as it is also on
 * events that hold nothing personal (the acceptance a report proved).
 */
export function metadataWithoutPersonalIds(e: RecordedEvent): RecordedEvent {
  const { commandId, causationId } = e.metadata;
  const command = typeof commandId === 'string' ? withoutPersonalPart(commandId) : commandId;
  const cause = typeof causationId === 'string' ? withoutPersonalPart(causationId) : causationId;
  if (command === commandId && cause === causationId) return e;
  return { ...e, metadata: { ...e.metadata, ...(command !== commandId ? { commandId: command } : {}), ...(cause !== causationId ? { causationId: cause } : {}) } };
}

/**
 * A report parked by an earlier version (unmatched_provider_events keeps it as it was parsed then),
 * under an id without the address or link: what it appends then holds none either. Its old id is its
 * `formerId`, should the same report have been recorded under it meanwhile.
 */
export function parkedReport(e: NormalizedProviderEvent): NormalizedProviderEvent {
  const id = withoutPersonalPart(e.providerEventId);
  if (id === e.providerEventId) return e;
  const outcome = e.outcome && ({ ...e.outcome, data: { ...e.outcome.data, providerEventId: id } } as typeof e.outcome);
  return { ...e, providerEventId: id, formerId: e.providerEventId, ...(outcome ? { outcome } : {}) };
}
