/**
 * A parsed JSON value in the canonical form of RFC 8785 (object keys sorted by UTF-16 code units,
 * numbers and strings as JSON.stringify writes them), as the `canonicalize` package writes it, but
 * total: it never throws. A JSON number past ±1.8e308 parses as ±Infinity, which RFC 8785 cannot
 * write and `canonicalize` threw on (a 500 where the request deserved its 400); it is written here as
 * the bare word `Infinity` (`-Infinity`, `NaN`), which no JSON text contains, so it cannot be taken
 * for another value. Iterative, so no nesting overflows the stack.
 */
export function canonicalJson(value: unknown): string {
  let out = '';
  // what is left to write, last first: values, and the punctuation between them
  const todo: Array<{ value: unknown } | { text: string }> = [{ value }];
  while (todo.length > 0) {
    const next = todo.pop()!;
    if ('text' in next) {
      out += next.text;
      continue;
    }
    let v = next.value;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON(): unknown }).toJSON();
    if (typeof v === 'number' && !Number.isFinite(v)) {
      out += String(v);
    } else if (v === null || typeof v !== 'object') {
      // undefined, a function or a symbol at the top: JSON.stringify's undefined, written as nothing
      out += JSON.stringify(v) ?? '';
    } else if (Array.isArray(v)) {
      const parts: Array<{ value: unknown } | { text: string }> = [{ text: '[' }];
      v.forEach((item, i) => {
        if (i > 0) parts.push({ text: ',' });
        parts.push({ value: item === undefined || typeof item === 'symbol' || typeof item === 'function' ? null : item });
      });
      parts.push({ text: ']' });
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    } else {
      const record = v as Record<string, unknown>;
      const parts: Array<{ value: unknown } | { text: string }> = [{ text: '{' }];
      for (const key of Object.keys(record).sort()) {
        const item = record[key];
        if (item === undefined || typeof item === 'symbol' || typeof item === 'function') continue;
        parts.push({ text: `${parts.length > 1 ? ',' : ''}${JSON.stringify(key)}:` }, { value: item });
      }
      parts.push({ text: '}' });
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    }
  }
  return out;
}
