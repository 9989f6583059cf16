import type { Db } from '../adapters/db/knex.js';
import { createId } from '../cuid.js';
import { badRequest } from '../domain/errors.js';
import { exportStream } from '../domain/privacy/data-export.js';
import { checkSuppressionImport, MAX_SUPPRESSION_IMPORT } from '../domain/suppression/import-entry.js';
import { importStream, suppressionListExportDecider, suppressionListImportDecider } from '../domain/suppression/list-transfer.js';
import type { EventStore } from '../ports/event-store.js';
import type { PersonOf } from '../ports/key-store.js';
import type { createProjectionWaiter } from '../projections/waiter.js';
import { suppressedPersons, suppressionCount, suppressionsPage } from '../read-models/suppressions.js';
import { callerMetadata, type Caller } from './caller.js';
import { execute } from './execute.js';
import { suppressionView, type SuppressionCommands } from './suppressions.js';

/** entries read from the list at a time while exporting */
const EXPORT_PAGE = 500;
/** how long an import waits, at its end, for the list to show what it appended (up to a thousand entries) */
const READ_MODEL_WAIT_MS = 60_000;

/**
 * The suppression list as a whole: brought from another provider (import) and taken away as a file
 * (export), for a service that is being left or joined.
 */
export function createSuppressionListCommands(deps: {
  db: Db;
  eventStore: EventStore;
  personOf: PersonOf;
  suppressions: SuppressionCommands;
  waiter: Pick<ReturnType<typeof createProjectionWaiter>, 'waitFor'>;
}) {
  return {
    /**
     * Suppresses each valid entry (source `import`, which fires `contact.suppressed` unless `notify` is
     * false: a list moved whole is often known to the receivers already); an address already
     * suppressed keeps its entry as it is. The import is recorded first, for the audit trail. Each
     * entry is recorded whole or not at all (recordMany), so a request cut short is completed by
     * sending it again: what it wrote is then already suppressed. Answers once the list shows every
     * entry (a send to any of them is refused from then on).
     */
    async import(accountId: string, caller: Caller, entries: unknown[], options: { notify: boolean } = { notify: true }) {
      if (entries.length > MAX_SUPPRESSION_IMPORT) {
        throw badRequest(`entries: at most ${MAX_SUPPRESSION_IMPORT} entries per request (got ${entries.length})`);
      }
      const { valid, repeated, errors } = checkSuppressionImport(entries);
      const importId = createId();
      await execute(suppressionListImportDecider, { importId, accountId, entries: entries.length, importedAt: new Date().toISOString() }, {
        eventStore: deps.eventStore,
        streamId: importStream(importId),
        metadata: callerMetadata(caller),
      });
      const people = valid.map((e) => ({ ...e, person: deps.personOf(e.value) }));
      const known = await suppressedPersons(deps.db, accountId, people.map((e) => e.person));
      const { suppressed, position } = await deps.suppressions.recordMany(
        people
          .filter((e) => !known.has(e.person))
          .map((e) => ({ accountId, [e.kind]: e.value, reason: e.reason, source: 'import' as const, detail: e.detail, quiet: !options.notify, ...caller })),
      );
      if (position) await deps.waiter.waitFor('suppressions', position, READ_MODEL_WAIT_MS);
      return {
        total: entries.length,
        suppressed,
        alreadySuppressed: valid.length - suppressed + repeated,
        ...(errors.length ? { errors } : {}),
      };
    },

    /**
     * The whole list, newest first, in pages. The export is recorded for the audit trail before the
     * first entry is read: if it cannot be recorded, nothing leaves.
     */
    async export(accountId: string, caller: Caller) {
      const exportId = createId();
      const entries = await suppressionCount(deps.db, accountId);
      await execute(suppressionListExportDecider, { exportId, accountId, entries, exportedAt: new Date().toISOString() }, {
        eventStore: deps.eventStore,
        streamId: exportStream(exportId),
        metadata: callerMetadata(caller),
      });
      async function* pages() {
        let after: [string, string] | undefined;
        for (;;) {
          const rows = await suppressionsPage(deps.db, accountId, { after, limit: EXPORT_PAGE });
          if (rows.length) yield rows.map(suppressionView);
          if (rows.length < EXPORT_PAGE) return;
          after = rows[rows.length - 1].after;
        }
      }
      return { entries, pages: pages() };
    },
  };
}
export type SuppressionListCommands = ReturnType<typeof createSuppressionListCommands>;
