import { Op, UniqueConstraintError } from 'sequelize';
import type { Clock } from '../../shared/clock.js';
import type { SecretBox } from '../../shared/secret-box.js';
import { keyExpiresAt, keyLive, sealedSecretAad } from '../orders/order-requests.js';
import type { Models } from './models.js';
import type { NewOrder, OrderStore } from './orders.js';
import type { OrderRecord } from './records.js';
import { type Resealed, resealColumn } from './reseal.js';

/** An Idempotency-Key of POST /orders, as kept: digests (orders/order-requests.ts), never the key itself. */
export interface OrderRequestKey {
  /** Whose keys it is among (orders/order-requests.ts keyScope). */
  scope: string;
  /** keyDigest(scope, key). */
  keyDigest: string;
  /** requestDigest(body): the order the request asks for. */
  requestDigest: string;
}

/** What a request with a key came to. */
export type OrderOnce =
  /** A new order, made with this request; its key is kept with it. */
  | { kind: 'created'; order: OrderRecord; clientSecret: string }
  /** The order an earlier request with this key and the same body made, as it now stands, and its client secret. */
  | { kind: 'replayed'; order: OrderRecord; clientSecret: string }
  /** The key made an order for another body: nothing was made. */
  | { kind: 'reused'; orderId: string };

/** The key's row was inserted by another request first (its transaction committed before ours). */
class KeyTaken extends Error {
  override name = 'KeyTaken';
}

/** Rows deleted a statement when they expire: a purge never holds many locks at once. */
const PURGE_BATCH = 1000;

/** The client secret kept beside a key is sealed to the key's order. */
const aadOfRow = (_digest: unknown, row: { get(column: string): unknown }) =>
  sealedSecretAad(String(row.get('order_id')));

/**
 * POST /orders made once (issue 43, part 1). A key's row is written in the transaction of the order
 * it makes (OrderStore.create's claim), before the order's row: a second request with the key waits
 * on the row's lock until the first commits, then finds it; a process killed before the commit leaves
 * neither row (the server rolls back a transaction whose connection is gone), so a retry makes the
 * order once; killed after it, the retry finds the key and is answered the order.
 */
export class OrderRequestStore {
  constructor(
    private readonly models: Models,
    private readonly orders: OrderStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** What an earlier request with this key left, while the key lives: null when it made nothing yet. */
  async earlier(key: OrderRequestKey): Promise<Exclude<OrderOnce, { kind: 'created' }> | null> {
    const row = await this.models.OrderRequest.findByPk(key.keyDigest);
    if (!row) return null;
    if (!keyLive(row.expires_at, this.clock.now())) {
      // Past its day the key is free: its row goes now, or the new order's insert would meet it.
      // Only a row still expired is deleted (a request that took the key meanwhile keeps it).
      await this.models.OrderRequest.destroy({
        where: { key_digest: key.keyDigest, expires_at: { [Op.lte]: new Date(this.clock.now()) } },
      });
      return null;
    }
    if (row.request_digest !== key.requestDigest) return { kind: 'reused', orderId: row.order_id };
    const order = await this.orders.find(row.order_id);
    // Orders are never deleted; a row without its order would be a database restored in part.
    if (!order) throw new Error(`order ${row.order_id} of an Idempotency-Key does not exist`);
    return {
      kind: 'replayed',
      order,
      clientSecret: this.box.open(row.client_secret_sealed, sealedSecretAad(order.id)),
    };
  }

  /**
   * The order this request asks for, made once per key: the earlier one's when the key is taken
   * (meanwhile, too), else a new one with the key kept beside it. A reference another order holds is
   * the store's DuplicateReference, and the key is not kept.
   */
  async create(key: OrderRequestKey, input: NewOrder): Promise<OrderOnce> {
    // A key taken meanwhile is found at the next look (its request committed before our insert failed).
    for (let look = 1; ; look++) {
      const found = await this.earlier(key);
      if (found) return found;
      try {
        const made = await this.orders.create(input, async ({ orderId, clientSecret, now }, tx) => {
          try {
            await this.models.OrderRequest.create(
              {
                key_digest: key.keyDigest,
                scope: key.scope,
                request_digest: key.requestDigest,
                order_id: orderId,
                client_secret_sealed: this.box.seal(clientSecret, sealedSecretAad(orderId)),
                created_at: now,
                expires_at: keyExpiresAt(now),
              },
              { transaction: tx },
            );
          } catch (error) {
            if (error instanceof UniqueConstraintError) throw new KeyTaken();
            throw error;
          }
        });
        return { kind: 'created', ...made };
      } catch (error) {
        if (!(error instanceof KeyTaken) || look >= 3) throw error;
      }
    }
  }

  /** Deletes the keys past their day (the `idempotency-keys` job), a batch at a time; how many went. */
  async purgeExpired(): Promise<number> {
    const now = new Date(this.clock.now());
    let purged = 0;
    for (;;) {
      const gone = await this.models.OrderRequest.destroy({
        where: { expires_at: { [Op.lte]: now } },
        limit: PURGE_BATCH,
      });
      purged += gone;
      if (gone < PURGE_BATCH) return purged;
    }
  }

  /** Seals every kept client secret a previous key sealed again under the current one (key rotation). */
  reseal(): Promise<Resealed> {
    return resealColumn(this.models.OrderRequest, 'client_secret_sealed', aadOfRow, this.box, {
      read: ['order_id'],
    });
  }

  /** Whether the newest kept client secret opens (start-up's key check); true with none. */
  async newestOpens(): Promise<boolean> {
    const row = await this.models.OrderRequest.findOne({
      attributes: ['order_id', 'client_secret_sealed'],
      order: [['created_at', 'DESC']],
    });
    return row === null || this.box.opens(row.client_secret_sealed, sealedSecretAad(row.order_id));
  }

  /** The keys whose client secret no key opens (its key lost): their replay cannot answer it. */
  async unopened(): Promise<string[]> {
    const { unopened } = await resealColumn(
      this.models.OrderRequest,
      'client_secret_sealed',
      aadOfRow,
      this.box,
      { read: ['order_id'], write: false },
    );
    return unopened.map(String);
  }

  /**
   * Deletes the keys whose client secret no key opens (`keys discard-lost`); how many. A retry with
   * one of them within its day then makes a new order.
   */
  async discardUnopened(): Promise<number> {
    const unopened = await this.unopened();
    if (unopened.length === 0) return 0;
    return this.models.OrderRequest.destroy({ where: { key_digest: unopened } });
  }
}
