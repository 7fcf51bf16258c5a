import { createHmac } from 'node:crypto';
import type { RandomSource } from '../../shared/ids.js';
import { IdempotencyStore } from '../domain/idempotency.js';
import type { ReferenceHeldBy } from '../domain/payment-checks.js';
import { RateWindows } from '../domain/rate-window.js';
import type { PaymentSession } from '../domain/sessions.js';
import type { Verification } from '../domain/three-ds.js';
import { holdsReference, type Operation, type Transaction } from '../domain/transactions.js';
import { randomSandboxKeys, type SandboxKeys } from '../persistence/keys.js';
import { InstrumentStore } from './instrument-store.js';
import type { Seed, SeedApiKey, SeedMerchant } from './seed.js';
import { WebhookStore } from './webhook-store.js';

/** Who holds a merchant reference: a sale or auth, or a session's linked transaction. */
export type ReferenceHolder = { kind: 'transaction'; id: number };

/** The next id of each sequence: persisted, so that no id is handed out twice across restarts. */
export interface IdCounters {
  transaction: number;
  verification: number;
  cardholder: number;
  endpoint: number;
}

/** Everything the sandbox knows: accounts from the seed, records, indexes, id counters and limits. */
export class GatewayState {
  readonly merchants = new Map<number, SeedMerchant>();
  readonly keys = new Map<string, SeedApiKey>();
  readonly partnerMerchants = new Map<number, Set<number>>();

  readonly transactions = new Map<number, Transaction>();
  /** Auths neither captured nor voided (status `auth`): the ones that can lapse (sandbox.md section 11). */
  readonly openAuths = new Set<number>();
  /** `settings.auth_lifetime_s`, in ms. */
  readonly authLifetimeMs: number;
  #nextTransactionId = 100000;
  readonly verifications = new Map<string, Verification>();
  readonly verificationIds = new Map<number, string>();
  #nextVerificationId = 1;
  /** merchant id -> reference -> holder. */
  readonly references = new Map<number, Map<string, ReferenceHolder>>();
  /** `${merchantId}:${fingerprint}` -> until when the card must not be retried. */
  readonly doNotRetry = new Map<string, number>();
  readonly cardholders = new Map<string, number>();
  #nextCardholderId = 1;
  /** Cards on file, by vault token (sandbox.md section 11). */
  readonly instruments: InstrumentStore;

  readonly sessions = new Map<string, PaymentSession>();
  readonly sessionByTransaction = new Map<number, string>();
  /** Sessions still on the hosted page (pending_redirect), in creation order: the order they expire in. */
  readonly openSessions = new Set<string>();
  readonly webhooks: WebhookStore;
  /** merchant id -> until when its deliveries fail (sandbox.md section 10, webhook outage). */
  readonly outages = new Map<number, number>();
  /** gateway-api.md, Limits: test pings 10 and replays 30 a minute per API key. */
  readonly pingRate = new RateWindows({ limit: 10, windowMs: 60_000, slowdown: [] });
  readonly replayRate = new RateWindows({ limit: 30, windowMs: 60_000, slowdown: [] });

  readonly idempotency = new IdempotencyStore();
  readonly apiRate: RateWindows;
  readonly pageRate: RateWindows;
  /** Fault injection: extra latency per operation, between taking the idempotency key and executing. */
  readonly latencyMs = new Map<Operation, number>();

  readonly #fingerprintKey: Uint8Array;

  /** `keys`: derived from the persistence key; default per-process random keys (sandbox.md section 1). */
  constructor(seed: Seed, random: RandomSource, keys: SandboxKeys = randomSandboxKeys(random)) {
    for (const m of seed.merchants) this.merchants.set(m.id, m);
    for (const k of seed.api_keys) this.keys.set(k.key, k);
    for (const p of seed.partners) this.partnerMerchants.set(p.id, new Set(p.merchant_ids));
    this.authLifetimeMs = seed.settings.auth_lifetime_s * 1000;
    const { limit, window_s, slowdown } = seed.settings.rate_limit;
    this.apiRate = new RateWindows({ limit, windowMs: window_s * 1000, slowdown });
    this.pageRate = new RateWindows({
      limit: seed.settings.public_pages_per_minute,
      windowMs: 60_000,
      slowdown: [],
    });
    // Fingerprints match cards within a run (across runs too with a persisted key) and reveal nothing.
    this.#fingerprintKey = keys.fingerprints;
    this.webhooks = new WebhookStore(random, keys.secrets);
    this.instruments = new InstrumentStore(random);
  }

  fingerprint(cardNumber: string): string {
    return createHmac('sha256', this.#fingerprintKey).update(cardNumber).digest('hex');
  }

  cardholderId(merchantId: number, fingerprint: string): number {
    const key = `${merchantId}:${fingerprint}`;
    let id = this.cardholders.get(key);
    if (id === undefined) {
      id = this.#nextCardholderId++;
      this.cardholders.set(key, id);
    }
    return id;
  }

  nextTransactionId(): number {
    return this.#nextTransactionId++;
  }

  nextVerificationId(): number {
    return this.#nextVerificationId++;
  }

  /** Stores a 3DS record under both of its ids. */
  saveVerification(v: Verification): void {
    this.verifications.set(v.publicId, v);
    this.verificationIds.set(v.id, v.publicId);
  }

  /** A 3DS record by its `tds_` id or the deprecated numeric one (gateway-api.md, Versioning rule 5), as number or digits. */
  verification(id: string | number): Verification | undefined {
    const publicId = typeof id === 'number' || /^\d+$/.test(id) ? this.verificationIds.get(Number(id)) : id;
    return publicId === undefined ? undefined : this.verifications.get(publicId);
  }

  counters(): IdCounters {
    return {
      transaction: this.#nextTransactionId,
      verification: this.#nextVerificationId,
      cardholder: this.#nextCardholderId,
      endpoint: this.webhooks.nextEndpointId,
    };
  }

  /** After a restore: counters only move forward, never below what is already handed out. */
  restoreCounters(counters: IdCounters): void {
    this.#nextTransactionId = Math.max(this.#nextTransactionId, counters.transaction);
    this.#nextVerificationId = Math.max(this.#nextVerificationId, counters.verification);
    this.#nextCardholderId = Math.max(this.#nextCardholderId, counters.cardholder);
    this.webhooks.restoreNextEndpointId(counters.endpoint);
  }

  /**
   * Stores a record and keeps the indexes true: sales and auths hold their reference unless failed or
   * cancelled, and an auth is open until it is captured, voided or lapses.
   */
  saveTransaction(t: Transaction): void {
    this.transactions.set(t.id, t);
    if (t.type === 'auth' && t.status === 'auth') this.openAuths.add(t.id);
    else this.openAuths.delete(t.id);
    if (t.type !== 'sale' && t.type !== 'auth') return; // child records share their parent's reference
    const refs = this.#referencesOf(t.merchantId);
    const holder = refs.get(t.reference);
    if (holdsReference(t.status)) {
      if (!holder) refs.set(t.reference, { kind: 'transaction', id: t.id });
    } else if (holder?.kind === 'transaction' && holder.id === t.id) {
      refs.delete(t.reference);
    }
  }

  /** The capture record of an auth that was captured (one at most: an auth is captured once). */
  captureOf(paymentId: number): Transaction | undefined {
    return [...this.transactions.values()].find((t) => t.type === 'capture' && t.relatedId === paymentId);
  }

  /**
   * Whether a payment (a sale or auth) can be refunded by its method: card payments can; a session's
   * payment as its method's seed entry says (`refunds`, sandbox.md section 11), read at refund time.
   */
  methodRefunds(payment: Transaction): boolean {
    const sessionId = this.sessionByTransaction.get(payment.id);
    if (sessionId === undefined) return true;
    const { paymentMethod } = this.sessions.get(sessionId)!;
    const method = this.merchants
      .get(payment.merchantId)
      ?.payment_methods.find((m) => m.payment_method === paymentMethod);
    return method?.refunds ?? true;
  }

  /** Who holds a merchant's reference now, if anyone: a read, which adds no index entry. */
  referenceHolder(merchantId: number, reference: string): ReferenceHolder | undefined {
    return this.references.get(merchantId)?.get(reference);
  }

  /** The holder of a merchant's reference as a duplicate names it: with the session of a session's transaction. */
  referenceHeldBy(merchantId: number, reference: string): ReferenceHeldBy | undefined {
    const holder = this.referenceHolder(merchantId, reference);
    if (!holder) return undefined;
    const paymentSessionId = this.sessionByTransaction.get(holder.id);
    return paymentSessionId === undefined
      ? { transactionId: holder.id }
      : { transactionId: holder.id, paymentSessionId };
  }

  #referencesOf(merchantId: number): Map<string, ReferenceHolder> {
    let refs = this.references.get(merchantId);
    if (!refs) {
      refs = new Map();
      this.references.set(merchantId, refs);
    }
    return refs;
  }
}
