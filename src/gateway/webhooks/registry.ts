import { isoMicros } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import { SecretBox } from '../../shared/secret-box.js';
import { generateSecret } from '../../shared/signature.js';
import type { Transaction } from '../domain/transactions.js';
import {
  API_VERSION,
  type DeliveryErrorReason,
  deliveryStatus,
  type EventType,
  RETENTION_MS,
  STATUS_MESSAGES,
  subscribes,
} from '../domain/webhooks.js';

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

/** Endpoints and events: the webhook half of the sandbox's state. */
export class WebhookRegistry {
  readonly endpoints = new Map<number, Endpoint>(); // by merchant id: one per merchant
  readonly events = new Map<string, WebhookEvent>();
  #nextEndpointId = 1;
  readonly #box: SecretBox;

  /**
   * `secretKey` seals the signing secrets: per process without persistence, derived from the
   * persistence key with it. Either way no secret sits in memory or in the state file in clear.
   */
  constructor(
    private readonly random: RandomSource,
    secretKey: Uint8Array,
  ) {
    this.#box = new SecretBox(secretKey, random);
  }

  get nextEndpointId(): number {
    return this.#nextEndpointId;
  }

  restoreNextEndpointId(next: number): void {
    this.#nextEndpointId = Math.max(this.#nextEndpointId, next);
  }

  /** Rule 2: a new endpoint with a new secret, returned in plaintext this once. */
  create(merchantId: number, url: string, isActive: boolean, events: EventType[] | null, now: number) {
    const secret = generateSecret(this.random);
    const endpoint: Endpoint = {
      id: this.#nextEndpointId++,
      merchantId,
      url,
      isActive,
      events,
      sealedSecret: this.#box.seal(secret, `endpoint:${merchantId}`),
      lastSuccessAt: null,
      lastFailureAt: null,
      consecutiveFailures: 0,
      createdAt: now,
      updatedAt: now,
    };
    this.endpoints.set(merchantId, endpoint);
    return { endpoint, secret };
  }

  /** Rule 7: a hard cutover; whatever is signed from now on uses the new secret. */
  rotate(endpoint: Endpoint, now: number): string {
    const secret = generateSecret(this.random);
    endpoint.sealedSecret = this.#box.seal(secret, `endpoint:${endpoint.merchantId}`);
    endpoint.updatedAt = now;
    return secret;
  }

  secretOf(endpoint: Endpoint): string {
    return this.#box.open(endpoint.sealedSecret, `endpoint:${endpoint.merchantId}`);
  }

  /**
   * Records an event for a transaction change (sandbox.md section 8): only while the merchant has an
   * endpoint that subscribes to the type; due at once unless the endpoint is paused.
   */
  record(type: EventType, t: Transaction, provider: string, now: number): WebhookEvent | null {
    const endpoint = this.endpoints.get(t.merchantId);
    if (!endpoint || !subscribes(endpoint.events, type)) return null;
    const id = randomId('evt_', this.random);
    const payload = {
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
        },
      },
    };
    const event: WebhookEvent = {
      id,
      merchantId: t.merchantId,
      type,
      transactionId: t.id,
      reference: t.reference,
      body: JSON.stringify(payload),
      status: 'pending',
      attempts: [],
      scheduledAttempts: 0,
      nextAttemptAt: endpoint.isActive ? now : null,
      queuedReplays: 0,
      createdAt: now,
      deliveredAt: null,
      failedAt: null,
    };
    this.events.set(id, event);
    return event;
  }

  /** Events still inside the 30-day window (gateway-api.md, Limits): older ones are gone even before a prune. */
  retained(event: WebhookEvent, now: number): boolean {
    return now - event.createdAt < RETENTION_MS;
  }

  prune(now: number): number {
    let pruned = 0;
    for (const [id, event] of this.events) {
      if (!this.retained(event, now)) {
        this.events.delete(id);
        pruned++;
      }
    }
    return pruned;
  }
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
    last_success_at: e.lastSuccessAt === null ? null : isoMicros(e.lastSuccessAt),
    last_failure_at: e.lastFailureAt === null ? null : isoMicros(e.lastFailureAt),
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

const iso = (ms: number | null) => (ms === null ? null : isoMicros(ms));

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
    delivered_at: iso(e.deliveredAt),
    failed_at: iso(e.failedAt),
    last_attempt: last ? attemptView(last) : null,
  };
}

/** A single event: the payload and every attempt in order, in place of `last_attempt`. */
export function eventDetailView(e: WebhookEvent) {
  const { last_attempt: _, ...row } = eventRowView(e);
  return { ...row, payload: JSON.parse(e.body) as unknown, delivery_attempts: e.attempts.map(attemptView) };
}
