import Mustache from 'mustache';
import { badRequest } from '../errors.js';

export interface EmailParts {
  subject: string;
  html: string;
  text: string;
}

function render(field: keyof EmailParts, template: string, variables: Record<string, unknown>, escape: (s: string) => string): string {
  try {
    return Mustache.render(template, variables, undefined, { escape });
  } catch (err) {
    throw badRequest(`${field}: template error: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const raw = (s: string) => s;

/** Fills `{{placeholders}}`: HTML-escaped in html, as written in subject and text. Missing variables render empty. */
export function renderTemplate(parts: EmailParts, variables: Record<string, unknown>): EmailParts {
  return {
    subject: render('subject', parts.subject, variables, raw),
    html: render('html', parts.html, variables, Mustache.escape),
    text: render('text', parts.text, variables, raw),
  };
}
