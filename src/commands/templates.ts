import { createId } from '../cuid.js';
import type { Db } from '../adapters/db/knex.js';
import { templateDecider, templateStream, type TemplateFields } from '../domain/templates/template.js';
import { notFound } from '../domain/errors.js';
import type { EventStore } from '../ports/event-store.js';
import { execute } from './execute.js';
import { callerMetadata, type Caller } from './caller.js';
import type { WaitForProjection } from './read-your-writes.js';
import { templateRow, templatesOf } from '../read-models/templates.js';

export function templateView(row: Record<string, any>) {
  return {
    id: row.id,
    name: row.name,
    subject: row.subject,
    html: row.html,
    text: row.text,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export function createTemplateCommands(deps: { eventStore: EventStore; db: Db; waitFor: WaitForProjection }) {
  async function get(accountId: string, id: string) {
    const row = await templateRow(deps.db, accountId, id);
    if (!row) throw notFound(`template ${id} not found`);
    return templateView(row);
  }
  async function run(accountId: string, caller: Caller, id: string, command: Parameters<typeof templateDecider.decide>[0]) {
    const result = await execute(templateDecider, command, { eventStore: deps.eventStore, streamId: templateStream(id), metadata: callerMetadata(caller) });
    await deps.waitFor('templates', result.position);
    return result;
  }
  return {
    get,
    async list(accountId: string) {
      return (await templatesOf(deps.db, accountId)).map(templateView);
    },
    async create(accountId: string, caller: Caller, fields: TemplateFields) {
      const id = createId();
      await run(accountId, caller, id, { kind: 'create', id, accountId, fields, now: new Date().toISOString() });
      return get(accountId, id);
    },
    async update(accountId: string, caller: Caller, id: string, fields: Partial<TemplateFields>) {
      await run(accountId, caller, id, { kind: 'update', id, accountId, fields, now: new Date().toISOString() });
      return get(accountId, id);
    },
    async remove(accountId: string, caller: Caller, id: string) {
      await run(accountId, caller, id, { kind: 'delete', id, accountId, now: new Date().toISOString() });
      return { id, deleted: true };
    },
  };
}
export type TemplateCommands = ReturnType<typeof createTemplateCommands>;
