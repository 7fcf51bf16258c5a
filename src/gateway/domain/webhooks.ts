import { isIP } from 'node:net';
import { isoMicros, isoMicrosOrNull } from '../../shared/clock.js';
import { bareHost, isLocalStyleHost, isNonPublicAddress } from './addresses.js';
import type { Transaction } from './transactions.js';

/** sandbox.md section 8; the default set is every type but `transaction.pending` (gateway-api.md, rule 3). */
export const EVENT_TYPES = [
  'transaction.pending',
  'transaction.captured',
  'transaction.refunded',
  'transaction.voided',
  'transaction.failed',
  'transaction.cancelled',
  'transaction.chargeback',
  'transaction.chargeback_reversed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const DEFAULT_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter(
  (t) => t !== 'transaction.pending',
);
export const API_VERSION = '2026-11-01';

export const MAX_URL_LENGTH = 2048;
export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const RESPONSE_EXCERPT_CHARS = 256;

/** Delay before each attempt after the previous one: immediately, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h. */
export const RETRY_DELAYS_S = [0, 60, 300, 1800, 7200, 21600, 43200, 86400] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length;

/** When the attempt after `attemptsMade` failed ones is due, or null when the event has failed for good. */
export function nextAttemptAt(attemptsMade: number, lastAttemptAt: number): number | null {
  const delay = RETRY_DELAYS_S[attemptsMade];
  return delay === undefined ? null : lastAttemptAt + delay * 1000;
}

export type DeliveryStatus = 'healthy' | 'degraded' | 'failing' | 'paused';

export function deliveryStatus(isActive: boolean, consecutiveFailures: number): DeliveryStatus {
  if (!isActive) return 'paused';
  if (consecutiveFailures === 0) return 'healthy';
  return consecutiveFailures < 5 ? 'degraded' : 'failing';
}

export const STATUS_MESSAGES: Record<DeliveryStatus, string> = {
  healthy: 'Deliveries are succeeding.',
  degraded: 'Recent deliveries failed; they are being retried.',
  failing: 'Deliveries keep failing; check the endpoint.',
  paused: 'The endpoint is paused: events are kept and delivered after reactivation.',
};

/**
 * gateway-api.md, Webhook management rule 1: HTTPS on a public host, no credentials, no
 * localhost-style name and no private address; at most 2048 characters. `allowPrivate` is the
 * sandbox's `allow_private_webhook_urls`, which lets local tests use http://127.0.0.1:PORT.
 * Returns the problem, or null.
 */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | null {
  if (url.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain credentials';
  if (allowPrivate)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:'
      ? null
      : 'must be an http or https URL';
  if (parsed.protocol !== 'https:') return 'must use https';
  const host = bareHost(parsed.hostname);
  if (isIP(host) !== 0)
    return isNonPublicAddress(host) ? 'must not point at a private or loopback address' : null;
  if (isLocalStyleHost(host)) return 'must be a publicly resolvable host, not a local name';
  return null;
}

/**
 * Rule 3: `events` omitted keeps the stored subscription, null resets to the default set, an empty
 * list is rejected (by the schema), a list replaces it.
 */
export function nextSubscription(
  stored: EventType[] | null,
  requested: readonly EventType[] | null | undefined,
): EventType[] | null {
  if (requested === undefined) return stored;
  if (requested === null) return null;
  return [...new Set(requested)];
}

/** Rule 3: null is the default set; `transaction.pending` only when listed. */
export function subscribes(events: readonly EventType[] | null, type: EventType): boolean {
  return (events ?? DEFAULT_EVENT_TYPES).includes(type);
}

/** The `error_reason` values of sandbox.md section 8. */
export type DeliveryErrorReason =
  | 'timeout'
  | 'connection_refused'
  | 'dns_error'
  | 'tls_error'
  | 'http_status'
  | 'endpoint_deleted';

/** The `acquirer_provider` of card payments; a session's payment carries its method's provider. */
export const CARD_PROVIDER = 'sandbox-acquirer';

export interface Endpoint {
  id: number;
  merchantId: number;
  url: string;
  isActive: boolean;
  events: EventType[] | null;
  /** gateway-api.md, Webhook management rule 2: stored encrypted, never read back through the API. */
  sealedSecret: string;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  consecutiveFailures: number;
  createdAt: number;
  updatedAt: number;
}

export interface Attempt {
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  errorReason: DeliveryErrorReason | null;
  responseExcerpt: string | null;
  durationMs: number;
  isReplay: boolean;
  createdAt: number;
}

export type EventStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookEvent {
  id: string;
  merchantId: number;
  type: EventType;
  transactionId: number;
  reference: string;
  /** The payload exactly as signed and sent, every time. */
  body: string;
  status: EventStatus;
  attempts: Attempt[];
  /** Scheduled (non-replay) attempts made: what the retry schedule counts. */
  scheduledAttempts: number;
  /** When the next scheduled attempt is due; null when none is (delivered, failed, or paused). */
  nextAttemptAt: number | null;
  /** Replays asked for and not yet attempted. */
  queuedReplays: number;
  createdAt: number;
  deliveredAt: number | null;
  failedAt: number | null;
}

/** The payload of a transaction event (sandbox.md section 8), as it is signed and sent. */
export function eventPayload(id: string, type: EventType, t: Transaction, provider: string, now: number) {
  return {
    id,
    type,
    created_at: isoMicros(now),
    api_version: API_VERSION,
    data: {
      transaction: {
        id: t.id,
        merchant_trans_id: t.reference,
        related_trans_id: t.relatedId,
        transaction_type: t.type,
        status: t.status,
        amount: t.amount,
        currency: t.currency,
        acquirer_provider: provider,
        acquirer_trans_id: t.acquirerTransId,
        acquirer_auth_code: t.acquirerAuthCode,
        description: t.description,
        created_at: isoMicros(t.createdAt),
        updated_at: isoMicros(t.updatedAt),
        refunded_amount: t.refundedAmount,
        chargeback_amount: t.chargebackAmount, // sandbox.md section 11
        // The record carries it (section 11), the payload too: a receiver tells a lapse from a risk block.
        capture_before: isoMicrosOrNull(t.captureBefore),
        // The record carries it (section 11): a receiver that missed the answer learns the saved card's token.
        vault_token: t.vaultToken,
      },
    },
  };
}

export function endpointView(e: Endpoint) {
  const status = deliveryStatus(e.isActive, e.consecutiveFailures);
  return {
    id: e.id,
    merchant_id: e.merchantId,
    url: e.url,
    is_active: e.isActive,
    events: e.events,
    has_secret: true,
    last_success_at: isoMicrosOrNull(e.lastSuccessAt),
    last_failure_at: isoMicrosOrNull(e.lastFailureAt),
    consecutive_failures: e.consecutiveFailures,
    delivery_status: status,
    status_message: STATUS_MESSAGES[status],
    created_at: isoMicros(e.createdAt),
    updated_at: isoMicros(e.updatedAt),
  };
}

export function attemptView(a: Attempt) {
  return {
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    status_code: a.statusCode,
    error_reason: a.errorReason,
    response_excerpt: a.responseExcerpt,
    duration_ms: a.durationMs,
    is_replay: a.isReplay,
    created_at: isoMicros(a.createdAt),
  };
}

/** A list row: never the payload (gateway-api.md, Webhook event record). */
export function eventRowView(e: WebhookEvent) {
  const last = e.attempts.at(-1);
  return {
    id: e.id,
    event_type: e.type,
    transaction_id: e.transactionId,
    merchant_trans_id: e.reference,
    status: e.status,
    attempts: e.attempts.length,
    created_at: isoMicros(e.createdAt),
    delivered_at: isoMicrosOrNull(e.deliveredAt),
    failed_at: isoMicrosOrNull(e.failedAt),
    last_attempt: last ? attemptView(last) : null,
  };
}

/** A single event: the payload and every attempt in order, in place of `last_attempt`. */
export function eventDetailView(e: WebhookEvent) {
  const { last_attempt: _, ...row } = eventRowView(e);
  return { ...row, payload: JSON.parse(e.body) as unknown, delivery_attempts: e.attempts.map(attemptView) };
}
