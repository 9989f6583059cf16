import type { Db } from '../adapters/db/knex.js';
import { emailDomain, normaliseEmail } from '../domain/email/address.js';
import { rechecksAdmission } from '../domain/messages/admission-recheck.js';
import { messageDecider, type MessageState } from '../domain/messages/message.js';
import type { SuppressionReason } from '../domain/suppression/suppression.js';
import type { EventMetadata, EventStore, RecordedEvent } from '../ports/event-store.js';
import type { PersonOf } from '../ports/key-store.js';
import { dueSendFacts } from '../read-models/send-facts.js';
import { execute } from './execute.js';

/** A message about to be handed to the provider: its stream as the send worker read it, and who asks. */
export interface DueMessage {
  streamId: string;
  history: RecordedEvent[];
  state: MessageState;
  metadata: EventMetadata;
  now: string;
}

/**
 * RecheckAdmission: a message whose provider call comes long after its admission (a scheduled send,
 * see rechecksAdmission) has its recipient looked up on the account's suppression list again, by the
 * keyed hash the list holds them under, and an email's sender among the account's verified senders;
 * one suppressed since, or from a sender no longer verified, is failed (ProviderFailed saying which)
 * instead of sent. `withheld`: it was, and the provider must not be called.
 */
export function createAdmissionRecheck(deps: { db: Db; eventStore: EventStore; personOf: PersonOf }) {
  return async function recheckAdmission(message: DueMessage): Promise<{ state: MessageState; withheld: boolean }> {
    const queued = message.state.queued!;
    if (!rechecksAdmission(queued, message.now)) return { state: message.state, withheld: false };
    const from = 'fromEmail' in queued ? normaliseEmail(queued.fromEmail) : null;
    const facts = await dueSendFacts(deps.db, {
      accountId: queued.accountId,
      person: deps.personOf(queued.to),
      sender: from ? { domain: emailDomain(from), address: from } : null,
    });
    const command = {
      kind: 'recheckAdmission' as const,
      suppressedFor: facts.suppression_reason as SuppressionReason | null,
      senderVerified: facts.verified_sender,
      now: message.now,
    };
    const result = await execute(messageDecider, command, {
      eventStore: deps.eventStore,
      streamId: message.streamId,
      commandId: 'recheck-admission',
      metadata: message.metadata,
      history: message.history,
    });
    return { state: result.state, withheld: result.events.length > 0 };
  };
}
