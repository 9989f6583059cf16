import type { Db } from '../adapters/db/knex.js';
import { normaliseEmail } from '../domain/email/address.js';
import { parsePhoneNumber } from '../domain/sms/phone.js';
import { badRequest } from '../domain/errors.js';
import {
  suppressionDecider,
  type AddressSuppressed,
  type SuppressionReason,
  type SuppressionCommand,
  type SuppressionEvent,
  type SuppressionSource,
  type SuppressionState,
} from '../domain/suppression/suppression.js';
import { laterPosition, type EventMetadata, type EventStore, type Position } from '../ports/event-store.js';
import type { PersonOf } from '../ports/key-store.js';
import type { Step } from './execute-together.js';
import { createPersonStreams, type PersonStreams } from './person-streams.js';
import { execute } from './execute.js';
import { callerMetadata, type Caller } from './caller.js';
import { inParallel } from './in-parallel.js';
import { decodePageCursor, pageOf } from './page-cursor.js';
import type { WaitForProjection } from './read-your-writes.js';
import { suppressionOfPerson, suppressionsPage } from '../read-models/suppressions.js';

/** suppressions appended at once by recordMany */
const CONCURRENCY = 16;

export interface SuppressInput {
  accountId: string;
  email?: string;
  phone?: string;
  /**
   * The keyed hash of an email address no longer on record (its person erased), for a suppression
   * that must still hold: the unsubscribe link of a message sent to them. Used when `email` is absent.
   */
  person?: string;
  reason: SuppressionReason;
  source: SuppressionSource;
  messageId?: string | null;
  campaignId?: string | null;
  detail?: string | null;
  occurredAt?: string;
  /** webhooks are not told (an import that asked so) */
  quiet?: boolean;
  actor: string;
  /** the client address and request of an admin's suppression (absent for the service's own) */
  clientIp?: string | null;
  requestId?: string;
  /** makes a redelivered provider event or a retried request append nothing */
  commandId?: string;
}

/** Who suppressed; with no address to name the person by, the hash the read models key the entry on. */
function metadataOf(input: SuppressInput, value: string | null): EventMetadata {
  const metadata = input.clientIp === undefined ? { actor: input.actor } : callerMetadata({ actor: input.actor, clientIp: input.clientIp, requestId: input.requestId });
  return value === null ? { ...metadata, person: input.person } : metadata;
}

export function normaliseSuppressionValue(input: { email?: string; phone?: string }): { value: string; kind: 'email' | 'phone' } {
  if (input.email) return { value: normaliseEmail(input.email), kind: 'email' };
  const phone = input.phone ? parsePhoneNumber(input.phone) : null;
  if (!phone) throw badRequest(`${input.phone ?? ''} is not a valid phone number`);
  return { value: phone, kind: 'phone' };
}

export function suppressionView(row: Record<string, any>) {
  return {
    [row.kind === 'phone' ? 'phone' : 'email']: row.value,
    // an erased person's suppression still holds; it names them by keyed hash only
    ...(row.value === null ? { person: row.person } : {}),
    reason: row.reason,
    source: row.source,
    messageId: row.message_id,
    campaignId: row.campaign_id,
    detail: row.detail,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/**
 * Suppress and lift. Both wait for the suppression list to show the change before returning, so the
 * next send to that address is refused (docs/architecture.md, "Read-your-writes").
 */
export function createSuppressionCommands(deps: { eventStore: EventStore; db: Db; waitFor: WaitForProjection; personOf: PersonOf; streams?: PersonStreams }) {
  const streams = deps.streams ?? createPersonStreams({ eventStore: deps.eventStore, personOf: deps.personOf, namedByAddress: false });
  const valueOf = (input: Pick<SuppressInput, 'email' | 'phone' | 'person'>) =>
    input.person && !input.email ? { value: null, kind: 'email' as const } : normaliseSuppressionValue(input);
  const streamsOf = (inputs: Pick<SuppressInput, 'accountId' | 'email' | 'phone' | 'person'>[]) => streams.suppressions(inputs.map((input) => ({ accountId: input.accountId, value: valueOf(input).value, person: input.person })));

  /** The suppression as a step on `streamId`, its stream. */
  function stepOn(
    input: Omit<SuppressInput, 'actor' | 'clientIp' | 'requestId' | 'commandId'>,
    streamId: string,
  ): Step<SuppressionState, Extract<SuppressionCommand, { kind: 'suppress' }>, SuppressionEvent> {
    const { value, kind } = valueOf(input);
    const data: AddressSuppressed['data'] = {
      accountId: input.accountId,
      value,
      kind,
      reason: input.reason,
      source: input.source,
      messageId: input.messageId ?? null,
      campaignId: input.campaignId ?? null,
      detail: input.detail ?? null,
      occurredAt: input.occurredAt ?? new Date().toISOString(),
      ...(input.quiet ? { quiet: true as const } : {}),
    };
    return { decider: suppressionDecider, command: { kind: 'suppress', data }, streamId };
  }

  /**
   * Appends the suppression without waiting for the list to show it; the stream's state is the guard.
   */
  async function record(input: SuppressInput, options: { streamId?: string; newStream?: boolean } = {}) {
    const { decider, command, streamId } = stepOn(input, options.streamId ?? (await streamsOf([input]))[0]);
    const { value, kind } = command.data;
    const result = await execute(decider, command, {
      eventStore: deps.eventStore,
      streamId,
      commandId: input.commandId,
      // the caller has seen that the stream does not exist: the first attempt does not read it (a
      // stream made meanwhile fails the append, and it is read and decided again)
      history: options.newStream ? [] : undefined,
      metadata: metadataOf(input, value),
    });
    return { suppressed: result.events.length > 0, value, kind, position: result.position };
  }

  /**
   * Many suppressions (an import, the SMS opt-out sync), 16 appends at once without waiting for the
   * list; the store commits appends made together in one transaction. Each entry is recorded whole or
   * not at all, so the same entries again complete what is missing. Most such lists were never
   * suppressed here: those streams are appended without a read.
   */
  async function recordMany(inputs: SuppressInput[]): Promise<{ suppressed: number; position?: Position }> {
    let suppressed = 0;
    let position: Position | undefined;
    const streamIds = await streamsOf(inputs);
    const existing = await deps.eventStore.streamRevisions?.(streamIds);
    const seen = new Set<string>();
    const entries = inputs.map((input, i) => {
      // a stream named twice in the list is new to its first entry only
      const newStream = existing !== undefined && !existing.has(streamIds[i]) && !seen.has(streamIds[i]);
      seen.add(streamIds[i]);
      return { input, streamId: streamIds[i], newStream };
    });
    await inParallel(entries, CONCURRENCY, async ({ input, streamId, newStream }) => {
      const result = await record(input, { streamId, newStream });
      if (result.suppressed) suppressed++;
      position = laterPosition(position, result.position);
    });
    return { suppressed, position };
  }

  return {
    record,
    recordMany,
    /** The suppression as one stream's part of a command that writes other streams with it (executeTogether). */
    step: async (input: Omit<SuppressInput, 'actor' | 'clientIp' | 'requestId' | 'commandId'>) => stepOn(input, (await streamsOf([input]))[0]),
    /** Resolves once the suppression list shows what was appended at `position`. */
    listed: (position: Position | undefined) => deps.waitFor('suppressions', position),

    async suppress(input: SuppressInput) {
      const { position, ...result } = await record(input);
      await deps.waitFor('suppressions', position);
      return result;
    },

    async lift(accountId: string, caller: Caller, rawValue: string) {
      const { value, kind } = normaliseSuppressionValue(rawValue.includes('@') ? { email: rawValue } : { phone: rawValue });
      const result = await execute(
        suppressionDecider,
        { kind: 'lift', accountId, value, addressKind: kind, now: new Date().toISOString(), by: caller.actor },
        { eventStore: deps.eventStore, streamId: (await streams.suppressions([{ accountId, value }]))[0], metadata: callerMetadata(caller) },
      );
      await deps.waitFor('suppressions', result.position);
      return { [kind]: value, lifted: true };
    },

    /** One entry as the list shows it, or null when the value is not suppressed. */
    async get(accountId: string, value: string) {
      const row = await suppressionOfPerson(deps.db, accountId, deps.personOf(value));
      return row ? suppressionView(row) : null;
    },

    async list(accountId: string, opts: { search?: string; cursor?: string; limit: number }) {
      const rows = await suppressionsPage(deps.db, accountId, { search: opts.search, after: opts.cursor ? decodePageCursor(opts.cursor) : undefined, limit: opts.limit + 1 });
      const { page, nextCursor } = pageOf(rows, opts.limit);
      return { items: page.map(suppressionView), nextCursor };
    },
  };
}
export type SuppressionCommands = ReturnType<typeof createSuppressionCommands>;
