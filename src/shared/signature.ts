// Webhook signatures (sandbox.md section 8): `X-Service-Signature: t=<unix seconds>,v1=<hex>`,
// hex = HMAC-SHA256(key = secret as UTF-8, message = `<t>.` + raw body bytes).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
const UNSIGNED_INTEGER = /^\d+$/;

function assertTimestamp(timestampSeconds: number): void {
  // The header carries `t` as a plain integer; anything else could never verify.
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError(
      `timestamp must be a non-negative integer of seconds, got ${String(timestampSeconds)}`,
    );
  }
}

/**
 * The key goes to createHmac as the string it is (Node reads it as UTF-8, the same bytes): Node 24
 * tells a KeyObject or a CryptoKey from a Buffer by reading private slots, and a Buffer fails both
 * reads with a thrown and caught error, 13 µs an HMAC (a profile of the receiver at 32 connections:
 * a tenth of its process's CPU), where a string is no object and is never asked.
 */
function digest(payload: string | Uint8Array, secret: string, timestampSeconds: number): Buffer {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestampSeconds}.`, 'utf8');
  if (typeof payload === 'string') hmac.update(payload, 'utf8');
  else hmac.update(payload);
  return hmac.digest();
}

/** hex HMAC-SHA256(key = secret as UTF-8, message = `${t}.` + raw body bytes). */
export function computeSignature(
  payload: string | Uint8Array,
  secret: string,
  timestampSeconds: number,
): string {
  assertTimestamp(timestampSeconds);
  return digest(payload, secret, timestampSeconds).toString('hex');
}

/** The header value `t=<unix seconds>,v1=<hex>` for one secret (used by the sandbox and by tests). */
export function sign(payload: string | Uint8Array, secret: string, timestampSeconds: number): string {
  return `t=${timestampSeconds},v1=${computeSignature(payload, secret, timestampSeconds)}`;
}

export type VerifyFailure =
  | 'missing_header'
  | 'malformed_header'
  | 'no_secrets'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'signature_mismatch';

export type VerifyResult =
  | { ok: true; timestamp: number; secretIndex: number }
  | { ok: false; reason: VerifyFailure; message: string };

export interface VerifyOptions {
  payload: string | Uint8Array; // the raw body exactly as received
  header: string | null | undefined;
  secrets: readonly string[]; // every active secret; one match suffices
  nowSeconds: number; // injected clock, unix seconds
  toleranceSeconds?: number; // default 300, applied both ways (too old AND too new)
}

type ParsedHeader = { ok: true; timestamp: number; signatures: string[] } | { ok: false; message: string };

function parseHeader(header: string): ParsedHeader {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const rawPart of header.split(',')) {
    const part = rawPart.trim();
    const equals = part.indexOf('=');
    if (equals <= 0) return { ok: false, message: `${SIGNATURE_HEADER} has a part that is not key=value` };
    const key = part.slice(0, equals).trim();
    const value = part.slice(equals + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined) return { ok: false, message: `${SIGNATURE_HEADER} has more than one t=` };
      if (!UNSIGNED_INTEGER.test(value) || !Number.isSafeInteger(Number(value))) {
        return {
          ok: false,
          message: `${SIGNATURE_HEADER} t= must be a non-negative integer of unix seconds`,
        };
      }
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value);
    }
    // Other schemes (v0=, future versions) are ignored so that senders can add them.
  }
  if (timestamp === undefined) return { ok: false, message: `${SIGNATURE_HEADER} has no t= timestamp` };
  if (signatures.length === 0) return { ok: false, message: `${SIGNATURE_HEADER} has no v1= signature` };
  return { ok: true, timestamp, signatures };
}

function failed(reason: VerifyFailure, message: string): VerifyResult {
  return { ok: false, reason, message };
}

export function verify(options: VerifyOptions): VerifyResult {
  const { payload, header, secrets, nowSeconds } = options;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;

  if (header === null || header === undefined || header.trim() === '') {
    return failed('missing_header', `the ${SIGNATURE_HEADER} header is missing`);
  }
  const parsed = parseHeader(header);
  if (!parsed.ok) return failed('malformed_header', parsed.message);
  if (secrets.length === 0) return failed('no_secrets', 'no webhook secret is configured to verify against');

  const { timestamp } = parsed;
  // Checked before comparing, so a replayed old delivery is rejected whatever its signature.
  if (nowSeconds - timestamp > tolerance) {
    return failed(
      'timestamp_too_old',
      `t=${timestamp} is more than ${tolerance} seconds older than the receiver's clock (${Math.floor(nowSeconds)})`,
    );
  }
  if (timestamp - nowSeconds > tolerance) {
    return failed(
      'timestamp_too_new',
      `t=${timestamp} is more than ${tolerance} seconds ahead of the receiver's clock (${Math.floor(nowSeconds)})`,
    );
  }

  // Malformed v1 values simply cannot match; they are not compared at all.
  const candidates = parsed.signatures.filter((s) => HEX_SIGNATURE.test(s)).map((s) => Buffer.from(s, 'hex'));
  for (let secretIndex = 0; secretIndex < secrets.length; secretIndex++) {
    const expected = digest(payload, secrets[secretIndex]!, timestamp);
    for (const candidate of candidates) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) {
        return { ok: true, timestamp, secretIndex };
      }
    }
  }
  return failed(
    'signature_mismatch',
    'no v1 signature matches any active secret; the signature must be computed over the raw request body ' +
      'bytes exactly as received, and a JSON body that was parsed and re-serialised will not match',
  );
}

/** `whsec_` + base64url of 32 bytes from the injected source. */
export function generateSecret(randomBytes: (size: number) => Uint8Array): string {
  const bytes = randomBytes(32);
  if (bytes.length !== 32) throw new RangeError(`randomBytes(32) returned ${bytes.length} bytes`);
  return `whsec_${Buffer.from(bytes).toString('base64url')}`;
}
