import {
  type GatewayEventPayload,
  type GatewayPaymentSession,
  type GatewayTransaction,
  transactionSchema,
} from '../../client/schemas.js';
import { maskEvent } from './event-masking.js';
import { hasEventShape } from './event-shape.js';
import type { About, AttemptObservation, ObservationSource, TransactionObservation } from './observation.js';

/** A gateway event, read: an observation to apply, a ping to answer, or a typed refusal. */
export type ParsedEvent =
  | { kind: 'observation'; id: string; type: string; observation: TransactionObservation }
  | Exclude<CheckedEvent, { kind: 'event' }>;

/** A gateway event's bytes, checked: a transaction's event, a ping, or a typed refusal. */
export type CheckedEvent =
  | {
      kind: 'event';
      id: string;
      type: string;
      /** The transaction's id, as a string whatever JSON type it came as (gateway-api.md, Versioning). */
      transactionId: string;
      /** What the inbox keeps: the bytes as they came, or, card numbers truncated, the event written again. */
      kept: string;
      /** Where a card number was truncated (event-masking.ts); empty for most events. */
      masked: readonly string[];
    }
  | { kind: 'ping'; id: string }
  | {
      kind: 'rejected';
      reason: 'not_json' | 'bad_shape' | 'bad_id' | 'no_transaction';
      message: string;
    };

/** Shared by every event with nothing masked: the usual case allocates nothing for it. */
const NONE: readonly string[] = Object.freeze([]);

/**
 * What the inbox keeps an event by (its id, its type, its transaction's id): 1 to 64 printable ASCII
 * characters, no space. A longer one does not fit its column, and MariaDB compares trailing spaces
 * away ('evt_a' = 'evt_a '): either would turn a signed event into a 503 or a false duplicate.
 */
const KEPT_ID = /^[\x21-\x7e]{1,64}$/;

/**
 * The one reading of a gateway event's bytes (gateway-api.md, Webhook payload), wherever they come
 * from: the receiver (after the signature), the worker (from the inbox), event recovery. The
 * observation's source id is the event id, so the same event from two sources is one observation.
 * `masked`: where the event's card numbers were truncated when it was kept (the inbox row says), for
 * the order's history.
 */
export function parseEvent(
  text: string,
  source: ObservationSource,
  now: number,
  masked: readonly string[] = NONE,
): ParsedEvent {
  const event = readEvent(text);
  if (event.kind !== 'event') return event;
  // The shape is checked (readEvent): zod reads the transaction for its output, the ids as strings.
  const transaction = transactionSchema.safeParse(event.json.data.transaction);
  if (!transaction.success) return BAD_SHAPE;
  const observation = {
    ...observeTransaction(transaction.data, source, event.id, now),
    eventType: event.type,
  };
  const where = event.masked.length === 0 ? masked : [...masked, ...event.masked];
  if (where.length > 0) observation.masked = where;
  return { kind: 'observation', id: event.id, type: event.type, observation };
}

/**
 * Every check of `parseEvent`, without the observation: what the receiver needs to keep an event or
 * refuse it (the worker reads the observation when it applies it).
 */
export function checkEvent(text: string): CheckedEvent {
  const event = readEvent(text);
  if (event.kind !== 'event') return event;
  // Written out: an object rest (`{ json, ...checked }`) cost a sixth of the JSON.parse before it.
  return {
    kind: 'event',
    id: event.id,
    type: event.type,
    transactionId: event.transactionId,
    kept: event.kept,
    masked: event.masked,
  };
}

const NOT_JSON = Object.freeze({
  kind: 'rejected',
  reason: 'not_json',
  message: 'The body is not JSON.',
} as const);
const BAD_SHAPE = Object.freeze({
  kind: 'rejected',
  reason: 'bad_shape',
  message: 'The event does not have the documented shape.',
} as const);
const BAD_ID = Object.freeze({
  kind: 'rejected',
  reason: 'bad_id',
  message: 'The event id, type and transaction id must be 1 to 64 printable ASCII characters.',
} as const);
const NO_TRANSACTION = Object.freeze({
  kind: 'rejected',
  reason: 'no_transaction',
  message: 'The event carries no transaction.',
} as const);

/** An event's JSON once its shape is checked: `data.transaction` may be absent (a ping). */
type ShapedEvent = Omit<GatewayEventPayload, 'data'> & {
  data: { transaction?: Record<string, unknown> & { id: string | number } };
};

/** The one reading: JSON, card numbers truncated, the documented shape, the ids; the JSON read beside. */
function readEvent(
  text: string,
):
  | Exclude<CheckedEvent, { kind: 'event' }>
  | (Extract<CheckedEvent, { kind: 'event' }> & { json: ShapedEvent }) {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
  // gateway-api.md: the payload is "free of card data". What reads as a card number outside the ids is
  // truncated before anything reads the event (event-masking.ts): what is kept is what is applied.
  const masking = maskEvent(text, json);
  if (!hasEventShape(json)) return BAD_SHAPE;
  const event = json as ShapedEvent;
  const transaction = event.data.transaction;
  // As zod's schema reads it: an id is a string, whatever JSON type it came as.
  const transactionId = transaction === undefined ? undefined : String(transaction.id);
  if (!KEPT_ID.test(event.id) || !KEPT_ID.test(event.type) || !KEPT_ID.test(transactionId ?? 'none'))
    return BAD_ID;
  if (event.type === 'webhook.ping') return { kind: 'ping', id: event.id };
  if (transactionId === undefined) return NO_TRANSACTION;
  return {
    kind: 'event',
    id: event.id,
    type: event.type,
    transactionId,
    kept: masking?.text ?? text,
    masked: masking?.masked ?? NONE,
    json: event,
  };
}

/**
 * A gateway transaction record, from any answer or payload, as an observation. `about`: the attempt
 * the kit asked about; a sale's or auth's own record names the attempt's transaction.
 */
export function observeTransaction(
  t: GatewayTransaction,
  source: ObservationSource,
  sourceId: string,
  now: number,
  about?: About,
): TransactionObservation {
  const own = t.related_trans_id === null && (t.transaction_type === 'sale' || t.transaction_type === 'auth');
  return {
    ...seen(source, sourceId, now),
    ...(about ? { about: { ...about, ids: { ...about.ids, ...(own ? { transactionId: t.id } : {}) } } } : {}),
    transaction: {
      id: t.id,
      relatedId: t.related_trans_id,
      type: t.transaction_type,
      status: t.status,
      amountMinor: t.amount,
      currency: t.currency,
      refundedMinor: t.refunded_amount,
      statusReason: t.status_reason ?? null,
      reference: t.merchant_trans_id ?? null,
      captureBefore: timeOrNull(t.capture_before),
      chargebackMinor: t.chargeback_amount ?? null,
      updatedAt: timeOrNull(t.updated_at),
    },
  };
}

/** What a payment session's status says about its linked sale (gateway-api.md, States). */
const SESSION_TO_TRANSACTION: Record<string, string> = {
  created: 'pending',
  pending_redirect: 'pending',
  pending_provider: 'pending',
  paid: 'captured',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'cancelled',
  chargeback: 'chargeback',
};

/**
 * A payment session, as an observation of its linked transaction; an unknown session status stays
 * unknown. `about`: the attempt the kit asked about, which the session and its transaction belong to.
 */
export function observeSession(
  s: GatewayPaymentSession,
  source: ObservationSource,
  sourceId: string,
  now: number,
  about?: About,
): TransactionObservation {
  const expiresAt = s.expires_at === undefined ? Number.NaN : Date.parse(s.expires_at);
  const ids = {
    ...about?.ids,
    paymentSessionId: s.payment_session_id,
    transactionId: s.transaction_id,
    ...(Number.isNaN(expiresAt) ? {} : { sessionExpiresAt: expiresAt }),
    actionUrl: s.checkout_url,
  };
  return {
    ...seen(source, sourceId, now),
    ...(about ? { about: { ...about, ids } } : {}),
    sessionStatus: s.status,
    transaction: {
      id: s.transaction_id,
      relatedId: null,
      type: 'sale',
      status: SESSION_TO_TRANSACTION[s.status] ?? s.status,
      amountMinor: s.amount,
      currency: s.currency,
      refundedMinor: 0,
      reference: s.merchant_reference ?? null,
    },
  };
}

/** What the kit's own call or poll found about an attempt that no transaction record says (see AttemptObservation). */
export function observeFinding(
  about: About,
  finding: AttemptObservation['finding'],
  sourceId: string,
  now: number,
  source: AttemptObservation['source'] = 'api',
): AttemptObservation {
  return { ...seen(source, sourceId, now), about, finding };
}

/** A gateway timestamp as ms; null when absent or unreadable. */
function timeOrNull(text: string | null | undefined): number | null {
  const ms = text ? Date.parse(text) : Number.NaN;
  return Number.isNaN(ms) ? null : ms;
}

/** Who saw it, under which id, and when: what every observation carries. */
function seen<S extends ObservationSource>(source: S, sourceId: string, now: number) {
  return { source, sourceId, observedAt: now };
}
