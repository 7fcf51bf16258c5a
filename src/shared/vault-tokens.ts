/**
 * Vault tokens (sandbox.md section 11) in gateway JSON that the kit keeps: a token pays, without 3D
 * Secure, with the kit's API key, so a stored copy of a payload keeps none. The kit's own record of a
 * saved card keeps its token sealed (store/saved-cards.ts); nothing reads one back from a payload. Pure.
 */

/** What a kept copy holds in place of a vault token. */
export const MASKED_VAULT_TOKEN = '[vault token]';

/** A vault token's shape wherever it stands: `vt_` and 16 or more letters and digits (the sandbox's: 24). */
const VAULT_TOKEN = /(?<![A-Za-z0-9_])vt_[A-Za-z0-9]{16,}(?![A-Za-z0-9_])/g;

/**
 * Most payloads hold no token and no escape: one scan for these settles it without parsing. A token
 * is `vt_` where a token may start (not the `vt_` of every `evt_` id), or the text of a `vault_token`
 * key: the key then stands before a quote (the sandbox's events carry the key, null for most). An
 * escape (`\`) could spell either one (`vault\u005ftoken`), so it sends the payload to the parse too.
 */
const MAY_HOLD_TOKEN = /(?<![A-Za-z0-9_])vt_|\\|"vault_token"\s*:\s*"/;

/**
 * `json` with every vault token masked: the value of each `vault_token` key at any depth, and any
 * string holding a token's shape. The same text when it holds none (the usual event, kept byte for
 * byte); otherwise the parsed payload written again, its other values as they were. Text that is not
 * JSON comes back as it is (the receiver refuses it before this).
 */
export function maskVaultTokens(json: string): string {
  if (!MAY_HOLD_TOKEN.test(json)) return json;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return json;
  }
  let masked = false;
  const mask = (key: string, inner: string): string => {
    const next =
      key === 'vault_token' && inner !== ''
        ? MASKED_VAULT_TOKEN
        : inner.replace(VAULT_TOKEN, MASKED_VAULT_TOKEN);
    if (next !== inner) masked = true;
    return next;
  };
  // Without recursion: a payload may nest deeper than the stack.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const list = Array.isArray(node);
    for (const [key, inner] of Object.entries(node)) {
      if (inner !== null && typeof inner === 'object') stack.push(inner);
      if (typeof inner !== 'string') continue;
      const next = mask(list ? '' : key, inner);
      // Defined, not assigned: a key spelt `__proto__` (JSON.parse makes it an own one) is a value too.
      if (next !== inner)
        Object.defineProperty(node, key, {
          value: next,
          writable: true,
          enumerable: true,
          configurable: true,
        });
    }
  }
  if (typeof value === 'string') value = mask('', value);
  return masked ? JSON.stringify(value) : json;
}
