import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { RandomSource } from './ids.js';

/**
 * AES-256-GCM for secrets at rest (webhook signing secrets, the 3DS hold): `v1.<iv>.<tag>.<ciphertext>`,
 * base64url parts. `aad` binds a ciphertext to its purpose, so one cannot be swapped for another.
 */
export class SecretBox {
  readonly #key: Buffer;
  constructor(
    key: Uint8Array,
    private readonly random: RandomSource,
  ) {
    if (key.length !== 32) throw new RangeError('the encryption key must be 32 bytes');
    this.#key = Buffer.from(key);
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

  /** Throws on a tampered ciphertext, another key or another `aad`. */
  open(sealed: string, aad = ''): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) {
      throw new Error('not a sealed secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}
