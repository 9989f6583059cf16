import Mustache, { type TemplateCache } from 'mustache';
import { badRequest } from '../errors.js';

export interface EmailParts {
  subject: string;
  html: string;
  text: string;
}

/**
 * Parsed templates by their text, least recently used out first, at most `maxChars` of template text
 * in all. Mustache's own cache keeps every template it ever parsed, keyed by its whole text: with a
 * one-off body per send, that held every message body sent since the process started.
 */
export function createTemplateCache(maxChars: number): TemplateCache & { readonly size: number } {
  const entries = new Map<string, string>();
  let chars = 0;
  return {
    get size() {
      return entries.size;
    },
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      if (key.length > maxChars / 8 || entries.has(key)) return;
      entries.set(key, value);
      chars += key.length;
      for (const oldest of entries.keys()) {
        if (chars <= maxChars) break;
        entries.delete(oldest);
        chars -= oldest.length;
      }
    },
    clear() {
      entries.clear();
      chars = 0;
    },
  };
}

const writer = new Mustache.Writer();
// Saved templates come back with every send that uses them; a few MB of their text is plenty.
(writer as unknown as { templateCache: TemplateCache }).templateCache = createTemplateCache(8_000_000);

const templateFault = (err: unknown) => `template error: ${err instanceof Error ? err.message : String(err)}`;

function render(field: keyof EmailParts, template: string, variables: Record<string, unknown>, escape: (s: string) => string): string {
  // Text without a tag renders as itself: most one-off bodies, parsed for nothing before.
  if (!template.includes('{{')) return template;
  try {
    return writer.render(template, variables, undefined, { escape });
  } catch (err) {
    throw badRequest(`${field}: ${templateFault(err)}`);
  }
}

const raw = (s: string) => s;

const FIELDS = ['subject', 'html', 'text'] as const;

/**
 * A template that cannot be parsed (`Hi {{name`) would fail every send that uses it: refused when it
 * is saved, with each field's fault, as a send would word it.
 */
export function checkTemplate(parts: EmailParts): void {
  const issues = FIELDS.flatMap((field) => {
    if (!parts[field].includes('{{')) return [];
    try {
      writer.parse(parts[field]);
      return [];
    } catch (err) {
      return [{ field, message: templateFault(err) }];
    }
  });
  if (issues.length) throw badRequest(`${issues[0].field}: ${issues[0].message}`, { issues });
}

/** Fills `{{placeholders}}`: HTML-escaped in html, as written in subject and text. Missing variables render empty. */
export function renderTemplate(parts: EmailParts, variables: Record<string, unknown>): EmailParts {
  return {
    subject: render('subject', parts.subject, variables, raw),
    html: render('html', parts.html, variables, Mustache.escape),
    text: render('text', parts.text, variables, raw),
  };
}
