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

/** message streams read at once while exporting: enough to overlap the reads, few enough to keep a page's worth in memory */
const READ_AHEAD = 8;

/**
 * Everything the service holds about one person, for an admin answering their request for it: the
 * contact, the suppression, and every message to them with its whole history (bodies included, as
 * the log keeps them: unreadable once erased or past retention). Each export is recorded for the
 * audit trail, by the person's keyed hash, before anything of it is read: if it cannot be recorded,
 * nothing leaves. The messages come as an async list, read a few streams ahead of the writer, so a
 * person with tens of thousands of messages is never held in memory whole.
 */
export function createPersonalDataExport(deps: { db: Db; eventStore: EventStore; personOf: PersonOf }) {
  return async function exportPersonalData(accountId: string, caller: Caller, email: string) {
    const person = deps.personOf(email);
    const [contact, suppression, messageIds] = await Promise.all([
      contactOfPerson(deps.db, accountId, person),
      suppressionOfPerson(deps.db, accountId, person),
      messageIdsOfPerson(deps.db, accountId, person),
    ]);
    const exportedAt = new Date().toISOString();
    const exportId = createId();
    await execute(dataExportDecider, { exportId, accountId, person, messages: messageIds.length, exportedAt }, {
      eventStore: deps.eventStore,
      streamId: exportStream(exportId),
      metadata: callerMetadata(caller),
    });
    async function* messages() {
      for (let i = 0; i < messageIds.length; i += READ_AHEAD) {
        const ids = messageIds.slice(i, i + READ_AHEAD);
        const histories = await Promise.all(ids.map((id) => replayMessage(deps.eventStore, id)));
        for (const [k, id] of ids.entries()) yield { id, history: histories[k].events };
      }
    }
    return {
      head: {
        email,
        exportedAt,
        contact: contact ? contactView(contact) : null,
        suppression: suppression ? suppressionView(suppression) : null,
      },
      messages: messages(),
    };
  };
}
export type ExportPersonalData = ReturnType<typeof createPersonalDataExport>;
