import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';

/**
 * AES-256-GCM with a random 96-bit nonce: `nonce | tag | ciphertext`. `aad` binds the box to where it
 * belongs (a key's id, an event's type), so a box moved elsewhere does not open.
 */
const NONCE = 12;
const TAG = 16;

// Random bytes (nonces, new data keys) are drawn from a pool filled by the CSPRNG in one call per
// 4 KiB: a call per seal cost more than the encryption of a whole message, and randomBytes(32) per
// new key cost as much as sealing under it. Bytes handed out are wiped from the pool.
const pool = Buffer.alloc(4096);
let used = pool.length;
export function pooledRandomBytes(n: number): Buffer {
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const out = Buffer.from(pool.subarray(used, used + n));
  pool.fill(0, used, used + n);
  used += n;
  return out;
}

export function seal(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const nonce = pooledRandomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = cipher.update(plaintext);
  const last = cipher.final();
  return Buffer.concat([nonce, cipher.getAuthTag(), body, last], NONCE + TAG + body.length + last.length);
}

/** The plaintext, or null when the box does not open with this key and aad (wrong key, tampered, truncated). */
export function open(key: Buffer, box: Buffer, aad: string): Buffer | null {
  if (box.length < NONCE + TAG) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, NONCE));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(box.subarray(NONCE, NONCE + TAG));
    const body = decipher.update(box.subarray(NONCE + TAG));
    const last = decipher.final();
    return last.length === 0 ? body : Buffer.concat([body, last]);
  } catch {
    return null;
  }
}
