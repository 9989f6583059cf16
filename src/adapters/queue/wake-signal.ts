/**
 * A sleep that can be cut short. A signal given while nobody sleeps is kept for the next sleep, so
 * a job enqueued while the dispatcher is busy fetching is not left waiting for the next poll.
 */
export interface WakeSignal {
  signal(): void;
  sleep(ms: number): Promise<void>;
}

export function createWakeSignal(): WakeSignal {
  let pending = false;
  let wake: (() => void) | undefined;
  return {
    signal() {
      pending = true;
      wake?.();
    },
    async sleep(ms) {
      if (!pending) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(finish, ms);
          function finish() {
            clearTimeout(timer);
            wake = undefined;
            resolve();
          }
          wake = finish;
        });
      }
      pending = false;
    },
  };
}
