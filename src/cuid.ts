import { createHash, getRandomValues } from 'node:crypto';

const pool = new Uint32Array(1024);
let next = pool.length;

/** The same cryptographic source cuid2 uses, drawn 4 KiB at a time rather than 4 bytes per call. */
function cryptoRandom(): number {
  if (next === pool.length) {
    getRandomValues(pool);
    next = 0;
  }
  return pool[next++] / 0x1_0000_0000;
}

const LENGTH = 24;
const BIG_LENGTH = 32;
// ~22k hosts before a 50% chance of an initial counter collision (cuid2's own figure)
const INITIAL_COUNT_MAX = 476782367;

const entropy = (length: number, random: () => number) => {
  let s = '';
  while (s.length < length) s += Math.floor(random() * 36).toString(36);
  return s;
};

// SHA3-512 read as one big-endian number in base 36, first digit dropped (it biases the histogram).
const hash = (input: string) => BigInt(`0x${createHash('sha3-512').update(input).digest('hex')}`).toString(36).slice(1);

/**
 * cuid2's algorithm (@paralleldrive/cuid2 3.x), step for step: a random letter, then the hash of time,
 * salt, a session counter and a host fingerprint. The package converts the hash to base 36 with
 * bignumber.js, which cost a quarter of a millisecond per id, the largest single item of a send's CPU
 * here; node's SHA3 and native BigInt give the same digits (a test compares the two).
 */
export function initCuid(options: { random?: () => number; counter?: number; fingerprint?: string } = {}): () => string {
  const random = options.random ?? cryptoRandom;
  let count = options.counter ?? Math.floor(random() * INITIAL_COUNT_MAX);
  const fingerprint = options.fingerprint ?? hash(Object.keys(globalThis).toString() + entropy(BIG_LENGTH, random)).substring(0, BIG_LENGTH);
  return () => {
    const letter = String.fromCharCode(97 + Math.floor(random() * 26));
    const input = Date.now().toString(36) + entropy(LENGTH, random) + (count++).toString(36) + fingerprint;
    return letter + hash(input).substring(1, LENGTH);
  };
}

/** cuid2 ids (message ids, X-Service-Delivery, template ids, …). */
export const createId = initCuid();
