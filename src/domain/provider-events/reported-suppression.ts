/** Whom a provider's bounce, complaint or suppression change puts on the list, and with which detail. */
export type ReportedSuppression = { email: string; detail: string | null } | { person: string; detail: null };

/**
 * The report has been admitted (admitProviderEvent): its recipient is the message's, by address or,
 * once the message's address reads as null, by keyed hash. Then:
 * - the message's address can be read: the report's address, as always;
 * - it cannot, and the person was erased: the keyed hash alone, as an erased person's unsubscribe
 *   link does (docs/privacy.md). The report names the address in clear, but writing it down again
 *   would undo the erasure; and the provider's diagnostic goes too, as it may quote the address and a
 *   suppression with no address is sealed under no key (it would sit in the log in clear). With no
 *   address, the suppression sends no webhook (`webhookEventFor`).
 * - it cannot, and the person was not erased (the message is past the account's retention, which
 *   forgets message content, not suppressions): the report's address, sealed under the person's
 *   profile key like any suppression, and the webhook goes out as for any bounce.
 * Pure: `erased` is what the person's contact stream says now.
 */
export function reportedSuppression(facts: {
  /** the message's recipient as it reads now: null once erased or expired */
  messageTo: string | null;
  /** the message recipient's keyed hash */
  person: string | null;
  /** the address the provider's report names (admitted as the message's recipient) */
  reported: string;
  detail: string | null;
  erased: boolean;
}): ReportedSuppression {
  if (facts.messageTo === null && facts.erased && facts.person) return { person: facts.person, detail: null };
  return { email: facts.reported, detail: facts.detail };
}
