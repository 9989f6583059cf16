/**
 * Turns many single round trips into few batched ones, the way a database groups commits: items added
 * in the same turn of the event loop, or while the previous batch is being written, go out together in
 * the next batch. An idle caller waits for nothing but a setImmediate; a busy process sends one
 * statement where it sent one per caller (on this kind of machine a round trip's syscalls cost more
 * than the statement).
 *
 * `write` answers each item in input order: a value, or an `ItemFailure` that rejects that item's
 * add() alone. A `write` that throws rejects every add() of its batch and no other; one that returns
 * nothing resolves them all with undefined.
 */
export class ItemFailure {
  constructor(readonly error: unknown) {}
}

export interface GroupCommit<T, R> {
  add(item: T): Promise<R>;
  /** waits until everything added so far is written */
  drain(): Promise<void>;
}

export function createGroupCommit<T, R = void>(
  write: (items: T[]) => Promise<readonly (R | ItemFailure)[] | void>,
  options: { maxBatch?: number } = {},
): GroupCommit<T, R> {
  const maxBatch = options.maxBatch ?? Infinity;
  let waiting: { item: T; resolve(value: R): void; reject(err: unknown): void }[] = [];
  let writing: Promise<void> | undefined;

  function flush(): Promise<void> {
    const batch = waiting.splice(0, maxBatch);
    const run = write(batch.map((w) => w.item)).then(
      (results) =>
        batch.forEach((w, i) => {
          const r = results ? results[i] : undefined;
          if (r instanceof ItemFailure) w.reject(r.error);
          else w.resolve(r as R);
        }),
      (err) => batch.forEach((w) => w.reject(err)),
    );
    writing = run.then(() => {
      writing = undefined;
      if (waiting.length > 0) return schedule();
    });
    return writing;
  }

  function schedule(): Promise<void> {
    writing = new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
    return writing;
  }

  return {
    add(item) {
      const done = new Promise<R>((resolve, reject) => waiting.push({ item, resolve, reject }));
      if (!writing) void schedule();
      return done;
    },
    async drain() {
      while (writing) await writing;
    },
  };
}
