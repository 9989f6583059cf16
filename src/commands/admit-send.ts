import type { CapReservation, SendCounters, SlotRequest } from '../adapters/db/send-counters.js';
import type { CapOutcome, RefusalReason, SendAdmission } from '../domain/messages/send-admission.js';

/**
 * One send through its rules (`decide`, over the facts read for it): refused before the caps, it asks
 * for no slot; otherwise it asks for its slots, and the caps' answer is decided by the same rules. The
 * slots are taken atomically or not at all (reserve_send_slots), so no cap is ever exceeded.
 */
export async function admitSend<F extends { cap?: CapOutcome }>(
  decide: (facts: F) => SendAdmission,
  facts: F,
  counters: Pick<SendCounters, 'reserve' | 'taken'>,
  slots: SlotRequest,
  /** told which rule refused the send, before its error is thrown (metrics) */
  onRefused?: (reason: RefusalReason) => void,
): Promise<CapReservation> {
  const before = decide(facts);
  if (before.kind === 'refused') {
    onRefused?.(before.error.reason);
    throw before.error;
  }
  const cap = await counters.reserve(slots);
  const after = decide({ ...facts, cap });
  if (after.kind === 'refused') {
    onRefused?.(after.error.reason);
    throw after.error;
  }
  return counters.taken(slots);
}
