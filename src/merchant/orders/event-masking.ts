import {
  cardNumberRuns,
  ESCAPE_OR_EXPONENT,
  hasCardNumber,
  longDigitStretches,
  mayHoldCardNumber,
  mayHoldCardNumberOrEscape,
  truncateCardNumbers,
} from '../../shared/card-numbers.js';

/*
 * A gateway event is never refused for what its numbers look like (issue 44, part 1). The gateway's ids
 * and codes are its own and its acquirer's names for a payment, numeric on many gateways: whatever
 * their digits read as, they are no card number, and the kit keeps them as sent. Anything else in an
 * event that reads as one (shared/card-numbers.ts) is truncated to its last four digits before the
 * event is kept, and the order's history says where (reconciler/apply.ts). The event is applied all
 * the same: refusing it only delayed the order to the next poll, while the gateway's retries ran out.
 * Pure.
 */

/**
 * The fields gateway-api.md defines as ids and codes, by name, wherever they stand in an event: the
 * event's and every record's `id`, the transaction's own and its parent's, the merchant's and the
 * cardholder's numbers, the acquirer's transaction id, authorisation code and reference number, a
 * session's ids and its provider's, a 3DS record's, and the decline code (`status_reason`, sandbox.md
 * section 11). Not `merchant_trans_id` (the merchant's reference: text a shop typed) nor
 * `description`: those are free text. A field a gateway adds and the document does not name is free
 * text too, until the document names it.
 */
export const GATEWAY_ID_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'transaction_id',
  'related_trans_id',
  'merchant_id',
  'cardholder_id',
  'acquirer_trans_id',
  'acquirer_auth_code',
  'acquirer_ref_num',
  'payment_session_id',
  'provider_session_id',
  'provider_transaction_id',
  'public_id',
  'ds_trans_id',
  'delivery_id',
  'status_reason',
]);

/** What an event is kept as when something in it read as a card number. */
export interface MaskedEvent {
  /** The event's values written again (JSON), each card number outside an id field truncated. */
  text: string;
  /**
   * Where a card number was truncated: paths such as `data.transaction.description` (a key that was
   * one is named by its truncated self), and BYTES_ONLY when the bytes held one its values do not.
   */
  masked: string[];
}

/**
 * Named when the signed bytes held a card number that the event's values do not (a value a repeated
 * key hides, a number JavaScript rounds): the event is kept as its values read, so without it.
 */
export const BYTES_ONLY = '(the bytes only)';

/** At most this many places are named (then `…`), each by at most its last PATH_DEPTH keys. */
const MAX_PLACES = 10;
const PATH_DEPTH = 6;

/** Where an object stands: its key and its parent's place (the root's is null). */
interface Place {
  up: Place | null;
  name: string;
}

/**
 * The event to keep in place of `text` (`json`, `text` parsed, is changed to match): null when nothing
 * in it reads as a card number outside an id field, and `text` is kept byte for byte (most events: one
 * scan of the bytes settles it). Otherwise each such number is truncated in `json` and the event is
 * written again from its values, whatever their depth. A JSON value that is not an object is left
 * alone (no event: refused).
 */
export function maskEvent(text: string, json: unknown): MaskedEvent | null {
  // One scan settles most events; the two questions apart only for the rest.
  if (!mayHoldCardNumberOrEscape(text)) return null;
  const longDigits = mayHoldCardNumber(text);
  const escaped = ESCAPE_OR_EXPONENT.test(text);
  if (!longDigits && !escaped) return null;
  if (json === null || typeof json !== 'object') return null;
  const masked: string[] = [];
  // Stretches of thirteen digits in the values (ids included), and the card numbers in the ids: what
  // the bytes must hold no more of to be kept as they are.
  let stretches = 0;
  let idCards = 0;
  // Without recursion: a payload may nest deeper than the stack. Each object's place is a link to its
  // parent's, and a path is spelt out only for a field masked: the walk allocates nothing a value.
  const nodes: object[] = [json];
  const places: (Place | null)[] = [null];
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const place = places.pop()!;
    const list = Array.isArray(node);
    for (const key of Object.keys(node)) {
      const value = node[key];
      // A key that is a card number is named by its truncated self, in the event and in every path.
      const keyStretches = list ? 0 : longDigitStretches(key);
      stretches += keyStretches;
      const renamed = keyStretches > 0 && hasCardNumber(key);
      const name = renamed ? truncateCardNumbers(key) : key;
      let truncated = renamed;
      if (value !== null && typeof value === 'object') {
        nodes.push(value);
        places.push({ up: place, name });
      } else if (typeof value === 'string' || typeof value === 'number') {
        // A number's text can hold thirteen digits only from 10^12 up, or past its point.
        const written =
          typeof value === 'string' || !Number.isInteger(value) || Math.abs(value) >= 1e12
            ? String(value)
            : '';
        const valueStretches = written === '' ? 0 : longDigitStretches(written);
        stretches += valueStretches;
        if (valueStretches > 0) {
          if (!list && GATEWAY_ID_FIELDS.has(key)) idCards += cardNumberRuns(written);
          else if (hasCardNumber(written)) {
            define(node, key, truncateCardNumbers(written));
            truncated = true;
          }
        }
      }
      if (renamed) {
        define(node, name, node[key]);
        delete node[key];
      }
      if (truncated && masked.length <= MAX_PLACES)
        masked.push(masked.length < MAX_PLACES ? pathOf(place, name) : '…');
    }
  }
  if (masked.length === 0) {
    // No card number in the values but in ids. The bytes are kept as they came if they hold nothing
    // more: as many stretches of thirteen digits as the values, read the same (no escape, no
    // exponent), or, short of that, no more card numbers than the ids (a value a repeated key hides).
    if (!longDigits || (!escaped && longDigitStretches(text) === stretches)) return null;
    if (cardNumberRuns(text) <= idCards) return null;
    masked.push(BYTES_ONLY);
  }
  return { text: jsonText(json), masked };
}

/** A value to write as it stands: `{`, `"key":`, `,`, `]`. */
class Raw {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify of a parsed JSON value, without recursion: JSON.parse reads any depth, and
 * JSON.stringify overflows the stack on a few thousand levels, a signed body of some kilobytes.
 */
export function jsonText(root: unknown): string {
  let out = '';
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value instanceof Raw) out += value.text;
    else if (value === null || typeof value !== 'object') out += JSON.stringify(value);
    else if (Array.isArray(value)) {
      stack.push(new Raw(']'));
      for (let i = value.length - 1; i >= 0; i -= 1) {
        stack.push(value[i]);
        if (i > 0) stack.push(new Raw(','));
      }
      stack.push(new Raw('['));
    } else {
      const keys = Object.keys(value);
      stack.push(new Raw('}'));
      for (let i = keys.length - 1; i >= 0; i -= 1) {
        stack.push((value as Record<string, unknown>)[keys[i]!]);
        stack.push(new Raw(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`));
      }
      stack.push(new Raw('{'));
    }
  }
  return out;
}

/** `data.transaction.description`: a field by its last PATH_DEPTH keys (`….` before them when deeper). */
function pathOf(place: Place | null, name: string): string {
  let path = name;
  let depth = 1;
  for (let at = place; at !== null; at = at.up, depth += 1) {
    if (depth === PATH_DEPTH) return `….${path}`;
    path = `${at.name}.${path}`;
  }
  return path;
}

/** Sets a key as an own value: a key spelt `__proto__` (JSON.parse makes it an own one) is a value too. */
function define(node: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The history's words for where an event's card numbers were truncated (reconciler/apply.ts). */
export function maskNote(masked: readonly string[]): string {
  return `card number truncated to its last four digits before the event was kept: ${masked.join(', ')}`;
}
