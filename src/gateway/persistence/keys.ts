import { hkdfSync } from 'node:crypto';
import type { RandomSource } from '../../shared/ids.js';

/** The two keys the sandbox's state depends on: what seals webhook secrets, what fingerprints cards. */
export interface SandboxKeys {
  /** AES-256-GCM key of the SecretBox that seals webhook signing secrets. */
  secrets: Uint8Array;
  /** HMAC-SHA256 key of card fingerprints (sandbox.md section 1). */
  fingerprints: Uint8Array;
}

// Distinct labels: one master key, sub-keys that reveal nothing about it or about each other.
const SECRETS_LABEL = 'sandbox-gateway/webhook-secrets/v1';
const FINGERPRINTS_LABEL = 'sandbox-gateway/card-fingerprints/v1';
const KEY_ID_LABEL = 'sandbox-gateway/state-key-id/v1';

function derive(key: Uint8Array, label: string, length: number): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', key, new Uint8Array(0), label, length));
}

function assertKey(key: Uint8Array): void {
  if (key.length !== 32) throw new RangeError('the sandbox persistence key must be 32 bytes');
}

/** With persistence: both keys come from the 32-byte key passed in (HKDF-SHA256), so they survive a restart. */
export function deriveSandboxKeys(key: Uint8Array): SandboxKeys {
  assertKey(key);
  return { secrets: derive(key, SECRETS_LABEL, 32), fingerprints: derive(key, FINGERPRINTS_LABEL, 32) };
}

/**
 * A public name of the key, written in the state file: a restart under another key is refused
 * instead of silently failing every signature and every fingerprint match. It reveals nothing of the key.
 */
export function keyId(key: Uint8Array): string {
  assertKey(key);
  return Buffer.from(derive(key, KEY_ID_LABEL, 16)).toString('hex');
}

/**
 * Without persistence: per-process keys (sandbox.md section 1). The fingerprint key is drawn first, as
 * it always was, so runs on a seeded random source see the same ids as before.
 */
export function randomSandboxKeys(random: RandomSource): SandboxKeys {
  const fingerprints = random(32);
  const secrets = random(32);
  return { secrets, fingerprints };
}
