/**
 * Turns many single writes into few batched ones, the way a database groups commits: items added in
 * the same turn of the event loop, or while the previous batch is being written, go out together in
 * the next batch. Each add() settles with its batch (a failed batch fails every add() in it).
 */
export function createGroupCommit<T>(write: (items: T[]) => Promise<void>): { add(item: T): Promise<void>; drain(): Promise<void> } {
  let waiting: { item: T; resolve(): void; reject(err: unknown): void }[] = [];
  let writing: Promise<void> | undefined;

  function flush(): Promise<void> {
    const batch = waiting;
    waiting = [];
    const run = write(batch.map((w) => w.item)).then(
      () => batch.forEach((w) => w.resolve()),
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
      const done = new Promise<void>((resolve, reject) => waiting.push({ item, resolve, reject }));
      if (!writing) void schedule();
      return done;
    },
    async drain() {
      while (writing) await writing;
    },
  };
}
