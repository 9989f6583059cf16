import type { RecordedEvent } from '../../ports/event-store.js';
import type { CampaignEvent } from './campaign.js';

// The fan-out walks its audience in id order, and contact ids are random: a contact that joins the
// audience (an upsert adding the list or tag) while it sends sorts before the cursor as often as
// after it, and the walk would never reach it. Once the walk has walked the audience, the late walk
// goes over the audience's contacts changed since the fan-out began, in order of change (so a contact
// changing while it goes comes after where it is), finds those no step reached yet, and reaches them
// as any step does. A contact reached is known by its message (queued under the one id it has in the
// campaign) or by its id among those a step counted skipped; a contact that changed since without
// joining is one of those, and is not counted twice.

/**
 * How long before the fan-out began the late walk looks: a change is timed by the clock of the API
 * process that made it, a moment before the contacts read model shows it.
 */
export const LATE_JOIN_LOOKBACK_MS = 60_000;

/** The earliest change the late walk looks at, for a fan-out that began at `startedAt`. */
export const lateWalkSince = (startedAt: string): string => new Date(Date.parse(startedAt) - LATE_JOIN_LOOKBACK_MS).toISOString();

/** The contacts the campaign's steps counted skipped, as its history names them. */
export function contactsSkipped(history: RecordedEvent[]): Set<string> {
  const skipped = new Set<string>();
  for (const event of history) {
    if (event.type !== 'CampaignProgressed') continue;
    for (const id of (event.data as Extract<CampaignEvent, { type: 'CampaignProgressed' }>['data']).skippedIds ?? []) skipped.add(id);
  }
  return skipped;
}

/** Of the contacts changed since the fan-out began (in order of change), those no step reached: none queued for, none skipped. */
export const notReached = (changed: string[], queued: Set<string>, skipped: Set<string>): string[] => changed.filter((id) => !queued.has(id) && !skipped.has(id));
