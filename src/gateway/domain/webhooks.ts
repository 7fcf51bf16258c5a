import { isIP } from 'node:net';
import { isLocalStyleHost, isNonPublicAddress } from './addresses.js';

/** sandbox.md section 8. */
export const EVENT_TYPES = [
  'transaction.pending',
  'transaction.captured',
  'transaction.refunded',
  'transaction.voided',
  'transaction.failed',
  'transaction.cancelled',
  'transaction.chargeback',
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
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
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
