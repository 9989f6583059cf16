import type { Knex } from 'knex';
import type { RecordedEvent } from '../ports/event-store.js';

/** Maps a read-model table's base name to its name in one generation (`messages` → `messages_g3`). */
export type TableNames = (base: string) => string;

/**
 * A read model built from events. Its tables live per generation; the API reads views named after the
 * base names, which point at the active generation. `version` changes when the schema or the
 * handler's meaning changes: the runner then rebuilds a new generation beside the live one.
 */
export interface Projection {
  name: string;
  version: number;
  /** base names of the tables it owns; each gets a view of that name */
  tables: string[];
  /** only events of streams with these prefixes reach `handle` */
  streamPrefixes?: string[];
  /** only events of these types reach `handle` (all types when absent) */
  eventTypes?: string[];
  setup(trx: Knex.Transaction, t: TableNames): Promise<void>;
  handle(events: RecordedEvent[], trx: Knex.Transaction, t: TableNames): Promise<void>;
}

export const generationTables =
  (generation: number): TableNames =>
  (base) =>
    `${base}_g${generation}`;
