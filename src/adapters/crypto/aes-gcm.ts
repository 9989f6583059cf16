import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';

/**
 * AES-256-GCM with a random 96-bit nonce: `nonce | tag | ciphertext`. `aad` binds the box to where it
 * belongs (a key's id, an event's type), so a box moved elsewhere does not open.
 */
const NONCE = 12;
const TAG = 16;

// Nonces are drawn from a pool filled by the CSPRNG in one call per 4 KiB: a call per seal cost more
// than the encryption of a whole message.
const pool = Buffer.alloc(NONCE * 341);
let used = pool.length;
function nextNonce(): Buffer {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += NONCE;
  return Buffer.from(pool.subarray(used - NONCE, used));
}

export function seal(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const nonce = nextNonce();
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, cipher.getAuthTag(), body]);
}

/** The plaintext, or null when the box does not open with this key and aad (wrong key, tampered, truncated). */
export function open(key: Buffer, box: Buffer, aad: string): Buffer | null {
  if (box.length < NONCE + TAG) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, NONCE));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(box.subarray(NONCE, NONCE + TAG));
    return Buffer.concat([decipher.update(box.subarray(NONCE + TAG)), decipher.final()]);
  } catch {
    return null;
  }
}
