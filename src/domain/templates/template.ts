import type { Decider } from '../decider.js';
import { notFound } from '../errors.js';
import { checkTemplate } from '../email/render.js';

export interface TemplateFields {
  name: string;
  subject: string;
  html: string;
  text: string;
}
export type TemplateEvent =
  | { type: 'TemplateSaved'; data: TemplateFields & { id: string; accountId: string; savedAt: string; created: boolean } }
  | { type: 'TemplateDeleted'; data: { id: string; accountId: string; deletedAt: string } };

export type TemplateCommand =
  | { kind: 'create'; id: string; accountId: string; fields: TemplateFields; now: string }
  | { kind: 'update'; id: string; accountId: string; fields: Partial<TemplateFields>; now: string }
  | { kind: 'delete'; id: string; accountId: string; now: string };

export interface TemplateState {
  template: (TemplateFields & { id: string; accountId: string; createdAt: string; updatedAt: string }) | null;
}

export const templateStream = (id: string) => `template-${id}`;

export const templateDecider: Decider<TemplateState, TemplateCommand, TemplateEvent> = {
  initialState: { template: null },
  evolve(state, event) {
    if (event.type === 'TemplateSaved') {
      const { created, savedAt, ...fields } = event.data;
      return { template: { ...fields, createdAt: state.template?.createdAt ?? savedAt, updatedAt: savedAt } };
    }
    if (event.type === 'TemplateDeleted') return { template: null };
    return state;
  },
  decide(command, state) {
    if (command.kind === 'create') {
      if (state.template) return [];
      checkTemplate(command.fields);
      return [{ type: 'TemplateSaved', data: { ...command.fields, id: command.id, accountId: command.accountId, savedAt: command.now, created: true } }];
    }
    if (!state.template || state.template.accountId !== command.accountId) throw notFound('template not found');
    if (command.kind === 'delete') {
      return [{ type: 'TemplateDeleted', data: { id: command.id, accountId: command.accountId, deletedAt: command.now } }];
    }
    const { name, subject, html, text } = { ...state.template, ...command.fields };
    checkTemplate({ subject, html, text });
    return [{ type: 'TemplateSaved', data: { name, subject, html, text, id: command.id, accountId: command.accountId, savedAt: command.now, created: false } }];
  },
};
