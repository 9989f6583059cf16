import type { Db } from '../adapters/db/knex.js';
import { createId } from '../cuid.js';
import { dataExportDecider, exportStream } from '../domain/privacy/data-export.js';
import type { PersonOf } from '../ports/key-store.js';
import type { EventStore } from '../ports/event-store.js';
import { contactOfPerson, contactView } from '../read-models/contacts.js';
import { messageIdsOfPerson } from '../read-models/messages.js';
import { suppressionOfPerson } from '../read-models/suppressions.js';
import { callerMetadata, type Caller } from './caller.js';
import { execute } from './execute.js';
import { replayMessage } from './replay.js';
import { suppressionView } from './suppressions.js';

/**
 * Everything the service holds about one person, for an admin answering their request for it: the
 * contact, the suppression, and every message to them with its whole history (bodies included, as
 * the log keeps them: unreadable once erased or past retention). Each export is recorded for the
 * audit trail, by the person's keyed hash.
 */
export function createPersonalDataExport(deps: { db: Db; eventStore: EventStore; personOf: PersonOf }) {
  return async function exportPersonalData(accountId: string, caller: Caller, email: string) {
    const person = deps.personOf(email);
    const [contact, suppression, messageIds] = await Promise.all([
      contactOfPerson(deps.db, accountId, person),
      suppressionOfPerson(deps.db, accountId, person),
      messageIdsOfPerson(deps.db, accountId, person),
    ]);
    const messages = [];
    // one stream at a time: a person with thousands of messages must not open thousands of reads at once
    for (const id of messageIds) messages.push({ id, history: (await replayMessage(deps.eventStore, id)).events });
    const exportedAt = new Date().toISOString();
    const exportId = createId();
    await execute(dataExportDecider, { exportId, accountId, person, messages: messages.length, exportedAt }, {
      eventStore: deps.eventStore,
      streamId: exportStream(exportId),
      metadata: callerMetadata(caller),
    });
    return {
      email,
      exportedAt,
      contact: contact ? contactView(contact) : null,
      suppression: suppression ? suppressionView(suppression) : null,
      messages,
    };
  };
}
export type ExportPersonalData = ReturnType<typeof createPersonalDataExport>;
