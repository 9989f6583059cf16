import Mustache from 'mustache';
import type { EmailParts } from '../email/render.js';

// Apart from personalise.ts (which hashes with node:crypto), so that the dashboard's preview renders a
// contact's message by the very rules the fan-out uses.

/** The contact fields a campaign template may use, beside the campaign's own variables. */
export interface RecipientFields {
  email: string;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
}

/** The contact's fields over the campaign's variables (a field the contact has wins). */
export function recipientVariables(variables: Record<string, unknown>, contact: RecipientFields): Record<string, unknown> {
  const own = Object.fromEntries(Object.entries(contact).filter(([, v]) => v !== null && v !== ''));
  return { ...variables, ...own };
}

type Token = [string, string, number, number, Token[]?];

function blanks(tokens: Token[], variables: Record<string, unknown>): number {
  let n = 0;
  for (const [kind, name, , , children] of tokens) {
    if (kind === 'name' || kind === '&') {
      const v = name === '.' ? undefined : name.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), variables);
      if (v === undefined || v === null || v === '') n++;
    } else if (kind === '^' && children) {
      // an inverted section renders when its variable is missing; a section (#) only when it is there,
      // filled from it, so what a section holds is not counted
      n += blanks(children, variables);
    }
  }
  return n;
}

/** How many placeholders of the template render empty with these variables (0: every one is filled). */
export function unfilledPlaceholders(parts: EmailParts, variables: Record<string, unknown>): number {
  let n = 0;
  for (const template of [parts.subject, parts.html, parts.text]) {
    if (!template.includes('{{')) continue;
    try {
      n += blanks(Mustache.parse(template) as unknown as Token[], variables);
    } catch {
      // a template that does not parse is refused when it renders
    }
  }
  return n;
}
