import type { EventStore } from '../../ports/event-store.js';
import { createEventStoreDbEventStore } from './eventstoredb-event-store.js';
import { createPostgresEventStore } from './postgres-event-store.js';

/** EventStoreDB when EVENTSTORE_URL is set, else the PostgreSQL event store in the service's database. */
export function createEventStore(options: { databaseUrl: string; eventstoreUrl?: string; poolSize?: number }): EventStore {
  return options.eventstoreUrl
    ? createEventStoreDbEventStore({ connectionString: options.eventstoreUrl })
    : createPostgresEventStore({ connectionString: options.databaseUrl, poolSize: options.poolSize });
}
