import { randomBytes as nodeRandomBytes, randomFillSync } from 'node:crypto';

/** Randomness as an injected seam: returns `size` random bytes. */
export type RandomSource = (size: number) => Uint8Array;

// One call to the system's generator per 4 KiB, handed out in slices: an id a request costs a copy,
// not a system call (the same cache crypto.randomUUID keeps). Larger asks go straight through. A
// plain Uint8Array, not a Buffer: a slice of a Buffer is made through its species (Node's FastBuffer),
// a third slower than a slice of a Uint8Array (every delivery's request id takes one).
const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let used = 0;

export const cryptoRandom: RandomSource = (size) => {
  if (size > POOL_BYTES / 8) return nodeRandomBytes(size);
  if (used + size > pool.length) {
    pool = randomFillSync(new Uint8Array(POOL_BYTES));
    used = 0;
  }
  used += size;
  return pool.slice(used - size, used);
};

/** A deterministic source for tests (mulberry32); never for secrets outside tests. */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return (size) => {
    const out = new Uint8Array(size);
    for (let i = 0; i < size; i++) {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      out[i] = ((t ^ (t >>> 14)) >>> 0) & 0xff;
    }
    return out;
  };
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// 62 * 4 = 248: bytes at or above it are rejected so every character is equally likely.
const UNBIASED_LIMIT = 248;

/** `prefix` + `length` characters of [A-Za-z0-9] (sandbox.md section 3: `tds_`, `ps_`, `evt_`, `whd_`). */
export function randomId(prefix: string, random: RandomSource, length = 24): string {
  let id = prefix;
  while (id.length < prefix.length + length) {
    for (const byte of random(length)) {
      if (byte < UNBIASED_LIMIT) id += ALPHABET[byte % 62];
      if (id.length === prefix.length + length) break;
    }
  }
  return id;
}

/** Random hex, e.g. for acquirer references. */
export function randomHex(random: RandomSource, bytes: number): string {
  return Buffer.from(random(bytes)).toString('hex');
}

/** A version 4 UUID (RFC 9562) from 16 bytes of `random`: a seeded source gives the same one every run. */
export function randomUuid(random: RandomSource): string {
  const bytes = Uint8Array.from(random(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
