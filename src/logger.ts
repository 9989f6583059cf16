import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'courier-ledger' }, timestamp: pino.stdTimeFunctions.isoTime });
}

/**
 * `log`, at most once every `intervalMs`, saying how many were left out since: for errors that repeat
 * while a dependency is away (a queue's Redis retrying its connection every few hundred ms).
 */
export function atMostEvery<T>(intervalMs: number, log: (value: T, leftOut: number) => void, now = () => Date.now()): (value: T) => void {
  let last = -Infinity;
  let leftOut = 0;
  return (value) => {
    const t = now();
    if (t - last < intervalMs) {
      leftOut++;
      return;
    }
    last = t;
    log(value, leftOut);
    leftOut = 0;
  };
}
