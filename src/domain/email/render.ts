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

/**
 * What one field may cost to render: characters produced (counted at every level of nesting) and
 * passes over a section's body. Sections nested over a list multiply (seven levels over ten items
 * turn 400 bytes of request into 100 MB of body and seconds of CPU); a real template's lists stay
 * far below either. Besides the absolute limits, what a field may produce is bounded by what it was
 * made from: `perInputChar` characters for each of the template's and the variables' (as JSON), plus
 * `slackChars`. Four sections over ten items of 300 characters made 3 MB a message from 3 KB of
 * request, under 16 MB, and 100 of them in a batch or a campaign's step held the server for 40 s and
 * its memory past 5 GB; a receipt listing a thousand order lines is still far inside.
 */
export const RENDER_LIMITS = { chars: 16 * 1024 * 1024, passes: 200_000, perInputChar: 16, slackChars: 1024 * 1024 };

/** The characters a render of `parts` with `variables` may produce, per field (see RENDER_LIMITS). */
function renderBudget(parts: EmailParts, variables: Record<string, unknown>): number {
  const input = parts.subject.length + parts.html.length + parts.text.length + (JSON.stringify(variables)?.length ?? 0);
  return Math.min(RENDER_LIMITS.chars, input * RENDER_LIMITS.perInputChar + RENDER_LIMITS.slackChars);
}

class RenderTooLarge extends Error {}

/**
 * The variables' own properties only: a name never reaches what every object inherits
 * (`{{constructor}}`, `{{#toString}}`), whose functions Mustache would call.
 */
class OwnPropertiesContext extends Mustache.Context {
  override push(view: unknown): Mustache.Context {
    return new OwnPropertiesContext(view, this);
  }

  override lookup(name: string): unknown {
    if (name === '.') return this.view;
    const names = name.split('.');
    // as Mustache resolves a name: in the nearest context where the whole path is there
    for (let context: Mustache.Context | undefined = this; context; context = context.parent) {
      let value: unknown = context.view;
      let found = true;
      for (const key of names) {
        // a plain name is looked up on objects only; a dotted one reaches a string's length too
        const holder = typeof value === 'object' || (names.length > 1 && typeof value === 'string');
        if (value != null && holder && Object.hasOwn(Object(value), key)) {
          value = (value as Record<string, unknown>)[key];
        } else {
          found = false;
          break;
        }
      }
      if (found) return typeof value === 'function' ? undefined : value;
    }
    return undefined;
  }
}

/** Counts what a render costs, and stops it past RENDER_LIMITS (renders are synchronous: one at a time). */
class BoundedWriter extends Mustache.Writer {
  private chars = 0;
  private passes = 0;
  private budget = RENDER_LIMITS.chars;

  start(budget: number) {
    this.chars = 0;
    this.passes = 0;
    this.budget = budget;
  }

  override renderTokens(...args: Parameters<Mustache.Writer['renderTokens']>): string {
    if (++this.passes > RENDER_LIMITS.passes) throw new RenderTooLarge();
    const out = super.renderTokens(...args);
    this.chars += out.length;
    if (this.chars > this.budget) throw new RenderTooLarge();
    return out;
  }
}

const writer = new BoundedWriter();
// Saved templates come back with every send that uses them; a few MB of their text is plenty.
(writer as unknown as { templateCache: TemplateCache }).templateCache = createTemplateCache(8_000_000);

const templateFault = (err: unknown) => `template error: ${err instanceof Error ? err.message : String(err)}`;

function render(field: keyof EmailParts, template: string, variables: Record<string, unknown>, escape: (s: string) => string, budgetOf: () => number): string {
  // Text without a tag renders as itself: most one-off bodies, parsed for nothing before.
  if (!template.includes('{{')) return template;
  const budget = budgetOf();
  writer.start(budget);
  try {
    return writer.render(template, new OwnPropertiesContext(variables), undefined, { escape });
  } catch (err) {
    if (err instanceof RenderTooLarge) {
      throw badRequest(
        `${field}: template renders too much (over ${(budget / 1024 / 1024).toFixed(1)} MB, ${RENDER_LIMITS.perInputChar} times its template and variables and 1 MB more, at most ${RENDER_LIMITS.chars / 1024 / 1024} MB; or sections repeated over ${RENDER_LIMITS.passes.toLocaleString('en-US')} times)`,
      );
    }
    throw badRequest(`${field}: ${templateFault(err)}`);
  }
}

/** A subject is one header line of at most 998 characters (RFC 5322), filled in as well as written. */
export const MAX_SUBJECT = 998;
/** The most characters a send's html or text may have: as written, and (html) once its links are tracked. */
export const MAX_BODY = 5_000_000;

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

/**
 * Placeholders belong to templates and their variables: a send with neither is sent as written, so a
 * subject such as `Price {{x}}` is not emptied or refused as a broken template.
 */
export const hasPlaceholders = (send: { templateId?: string; variables?: Record<string, unknown> }) =>
  send.templateId !== undefined || send.variables !== undefined;

/** Fills `{{placeholders}}`: HTML-escaped in html, as written in subject and text. Missing variables render empty. */
export function renderTemplate(parts: EmailParts, variables: Record<string, unknown>): EmailParts {
  // worked out once, by the first field with a tag: most one-off bodies have none
  let budget: number | undefined;
  const budgetOf = () => (budget ??= renderBudget(parts, variables));
  const subject = render('subject', parts.subject, variables, raw, budgetOf);
  if (subject.length > MAX_SUBJECT) throw badRequest(`subject: longer than ${MAX_SUBJECT} characters once its placeholders are filled`);
  return {
    subject,
    html: render('html', parts.html, variables, Mustache.escape, budgetOf),
    text: render('text', parts.text, variables, raw, budgetOf),
  };
}
