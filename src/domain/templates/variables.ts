import { z } from 'zod';

export const NOT_FINITE = 'must be a finite number';

/**
 * Where each number of a parsed JSON value that is not finite lies, as paths below it (first in
 * document order first). A JSON number past ±1.8e308 (`1e999`) parses as ±Infinity: rendered it read
 * `Infinity`, stored in an event it became `null`, and an Idempotency-Key's fingerprint could not be
 * written. Iterative: no nesting overflows the stack.
 */
export function nonFinitePaths(value: unknown, limit = 100): PropertyKey[][] {
  type Node = { value: unknown; key?: PropertyKey; parent?: Node };
  // each node links to its parent: a path is written out only for what is found
  const pathOf = (node: Node): PropertyKey[] => {
    const path: PropertyKey[] = [];
    for (let n: Node | undefined = node; n?.parent; n = n.parent) path.push(n.key!);
    return path.reverse();
  };
  const found: PropertyKey[][] = [];
  const stack: Node[] = [{ value }];
  while (stack.length > 0 && found.length < limit) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === 'number' && !Number.isFinite(v)) found.push(pathOf(node));
    else if (v && typeof v === 'object') {
      const entries: Array<[PropertyKey, unknown]> = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i][1], key: entries[i][0], parent: node });
    }
  }
  return found;
}

/**
 * The values a template's placeholders are filled from (a send's, a campaign's, a test send's): any
 * JSON, but a number must be one (finite), refused as `variables.<key>: must be a finite number`.
 */
export const templateVariables = z.record(z.string(), z.unknown()).superRefine((variables, ctx) => {
  for (const path of nonFinitePaths(variables)) ctx.addIssue({ code: 'custom', path, message: NOT_FINITE });
});
