import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { RandomSource } from './ids.js';

/**
 * AES-256-GCM for secrets at rest (webhook signing secrets, saved cards' tokens, the 3DS hold):
 * `v1.<iv>.<tag>.<ciphertext>`, base64url parts. `aad` binds a ciphertext to its purpose, so one
 * cannot be swapped for another.
 */
export class SecretBox {
  readonly #key: Buffer;
  readonly #previous: readonly Buffer[];
  /** `previous`: keys this one replaced; what they sealed still opens (key rotation), nothing new is sealed with them. */
  constructor(
    key: Uint8Array,
    private readonly random: RandomSource,
    previous: readonly Uint8Array[] = [],
  ) {
    if ([key, ...previous].some((k) => k.length !== 32))
      throw new RangeError('the encryption key must be 32 bytes');
    this.#key = Buffer.from(key);
    this.#previous = previous.map((k) => Buffer.from(k));
  }

  seal(plaintext: string, aad = ''): string {
    const iv = Buffer.from(this.random(12));
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** Throws `NotSealedHere` on a tampered ciphertext, an unknown key or another `aad`. */
  open(sealed: string, aad = ''): string {
    return this.#open(sealed, aad).plaintext;
  }

  /** Whether `open` would open it (with the same `aad`). */
  opens(sealed: string, aad = ''): boolean {
    try {
      this.#open(sealed, aad);
      return true;
    } catch (error) {
      if (error instanceof NotSealedHere) return false;
      throw error;
    }
  }

  /**
   * The same secret sealed under the current key when it was sealed under a previous one; null when
   * it already is under the current key. Throws as `open` does.
   */
  resealed(sealed: string, aad = ''): string | null {
    const { plaintext, current } = this.#open(sealed, aad);
    return current ? null : this.seal(plaintext, aad);
  }

  #open(sealed: string, aad: string): { plaintext: string; current: boolean } {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) {
      throw new NotSealedHere('not a sealed secret');
    }
    for (const key of [this.#key, ...this.#previous]) {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      try {
        const plaintext = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
        return { plaintext: plaintext.toString('utf8'), current: key === this.#key };
      } catch {
        // Not this key (or altered): the next one.
      }
    }
    throw new NotSealedHere('sealed under none of the keys given (another key, or altered)');
  }
}

/** A sealed value none of the box's keys opens: another key sealed it, or it was altered. */
export class NotSealedHere extends Error {
  override name = 'NotSealedHere';
}
