import { type RandomSource, randomId } from '../../shared/ids.js';
import { SecretBox } from '../../shared/secret-box.js';
import { generateSecret } from '../../shared/signature.js';
import type { Transaction } from '../domain/transactions.js';
import {
  type Endpoint,
  type EventType,
  eventPayload,
  RETENTION_MS,
  subscribes,
  type WebhookEvent,
} from '../domain/webhooks.js';

/** Endpoints and events: the webhook half of the sandbox's state. */
export class WebhookStore {
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
    const payload = eventPayload(id, type, t, provider, now);
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
