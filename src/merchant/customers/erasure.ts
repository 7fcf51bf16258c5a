/**
 * Forgetting a customer (issue 43, part 4): what an erasure leaves in place of their personal data,
 * and how a kept text loses it. Pure: the I/O is merchant/privacy/erase.ts.
 *
 * Personal: what `customer` holds of a person (names, email, phone, address, city, postal code, IP
 * address) and the shop's id for them (`merchant_customer_id`). Kept: every fact of the money (ids,
 * amounts, currencies, statuses, references, disputes, history), the order's description and
 * reference (the shop's texts, sent to the gateway as the payment's), and the country code alone,
 * which names nobody and is not kept either: the whole `customer` object becomes the marker.
 */

/** What stands in a kept text where a personal value stood. */
export const ERASED = '[erased]';

/** An order's `customer` once erased: no field of the person, and when they were forgotten. */
export interface ErasedCustomer {
  erased: true;
  erased_at: string;
}

export function erasedCustomer(at: Date): ErasedCustomer {
  return { erased: true, erased_at: at.toISOString() };
}

/** Whether an order's `customer` is an erasure's marker. */
export function isErased(customer: Record<string, unknown> | null): boolean {
  return customer !== null && customer.erased === true;
}

/** What a kept copy (a webhook payload) may carry of a person under these keys, at any depth. */
const PERSONAL_KEYS = new Set([
  'customer',
  'merchant_customer_id',
  'customer_reference',
  'first_name',
  'last_name',
  'name',
  'email',
  'phone',
  'address',
  'city',
  'postal_code',
  'ip_address',
  'browser_data',
  'billing_address',
  'shipping_address',
]);

/**
 * The money's own fields in a gateway payload: never rewritten, whatever they hold (a reference made
 * of an email address stays, or the payment would no longer find its order).
 */
const MONEY_KEYS = new Set([
  'id',
  'type',
  'status',
  'transaction_type',
  'merchant_trans_id',
  'related_trans_id',
  'amount',
  'currency',
  'refunded_amount',
  'chargeback_amount',
  'created_at',
  'updated_at',
  'capture_before',
  'api_version',
  'status_reason',
  'payment_session_id',
  'transaction_id',
  'merchant_id',
  'cardholder_id',
  'acquirer_provider',
  'acquirer_trans_id',
  'acquirer_auth_code',
  'acquirer_ref_num',
  'provider_session_id',
  'provider_transaction_id',
  'vault_token',
]);

/**
 * The person's values an erasure looks for in kept texts: every text of their `customer` but the
 * country code, and their id. Shorter than 3 characters, a value is looked for only as a whole text
 * (a `"Al"` in a word is not Al).
 */
export function personalValues(customer: Record<string, unknown> | null, customerId: string): string[] {
  const values = new Set<string>([customerId]);
  for (const [key, value] of Object.entries(customer ?? {}))
    if (key !== 'country_code' && typeof value === 'string' && value.trim() !== '') values.add(value.trim());
  return [...values];
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `text` with each personal value (any case) in it replaced by ERASED; the same text when none is.
 * The longest first: a name inside an email address must not leave the rest of the address behind.
 */
export function withoutValues(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of [...values].sort((a, b) => b.length - a.length)) {
    if (out.trim().toLowerCase() === value.toLowerCase()) return ERASED;
    if (value.length >= 3) out = out.replace(new RegExp(escaped(value), 'gi'), ERASED);
  }
  return out;
}

/**
 * A kept JSON text (a webhook payload) without the person: the value of each personal key at any
 * depth becomes ERASED, and each personal value in any other text too, save the money's own fields.
 * The same text, byte for byte, when nothing changes; text that is not JSON is erased where a value
 * stands. Without recursion: a payload may nest deeper than the stack.
 */
export function scrubJson(text: string, values: readonly string[]): string {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return withoutValues(text, values);
  }
  let changed = false;
  const box = { root };
  const stack: object[] = [box];
  while (stack.length > 0) {
    const node = stack.pop()!;
    for (const [key, inner] of Object.entries(node)) {
      const named = !Array.isArray(node) && node !== box;
      let next: unknown = inner;
      if (named && PERSONAL_KEYS.has(key) && inner !== null && inner !== ERASED) next = ERASED;
      else if (inner !== null && typeof inner === 'object') stack.push(inner);
      else if (typeof inner === 'string' && !(named && MONEY_KEYS.has(key)))
        next = withoutValues(inner, values);
      if (next !== inner) {
        changed = true;
        // Defined, not assigned: a key spelt `__proto__` (JSON.parse makes it an own one) is a value too.
        Object.defineProperty(node, key, {
          value: next,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
    }
  }
  return changed ? JSON.stringify(box.root) : text;
}

/**
 * An audit line's detail without the customer's id: the kit's lines name a customer as `customer <id>`,
 * then the end, `: ` or `, ` (the id is printable ASCII and may hold either mark alone). The same
 * text when it names another customer, or none.
 */
export function detailWithout(detail: string, customerId: string, label: string): string {
  return detail.replace(new RegExp(`customer ${escaped(customerId)}(?=$|: |, )`, 'g'), `customer ${label}`);
}

/** What one erasure did, as its answer and its audit line say it. */
export interface ErasureSummary {
  /** The customer as the records now name them: `cer_` and a keyed digest of their id (never the id). */
  reference: string;
  erasedAt: Date;
  orders: number;
  /** Saved cards revoked at the gateway (the kit's and any the gateway listed), and the kit's rows removed. */
  cardsRevoked: number;
  cardsRemoved: number;
  /** Kept webhook payloads that held something of the person, rewritten without it. */
  webhookEvents: number;
  /** Order events in the outbox, their bodies rewritten without the customer. */
  orderEvents: number;
  /** Payments across a 3DS challenge whose sealed details lost the customer's (the card stays, to pay). */
  heldPayments: number;
  /** Audit lines that named the customer's id, now their reference. */
  auditLines: number;
}

/** The audit line's detail of an erasure: what it did, in numbers. */
export function erasureDetail(s: ErasureSummary): string {
  return [
    `orders ${s.orders}`,
    `saved cards ${s.cardsRemoved} (${s.cardsRevoked} revoked at the gateway)`,
    `webhook events ${s.webhookEvents}`,
    `order events ${s.orderEvents}`,
    `held payments ${s.heldPayments}`,
    `audit lines ${s.auditLines}`,
  ].join(', ');
}
