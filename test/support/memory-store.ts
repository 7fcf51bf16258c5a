import type { CheckoutStore } from '../../src/merchant/checkout/deps.js';
import { bookAfter, type DisputeBook, EMPTY_BOOK } from '../../src/merchant/orders/disputes.js';
import type { ApplyStore } from '../../src/merchant/reconciler/apply.js';
import { beforeAttempt, newAttempt } from '../../src/merchant/store/attempt-rows.js';
import type {
  AttemptRecord,
  Change,
  OrderBeforeAttempt,
  OrderRecord,
  Transitioned,
  TransitionTarget,
} from '../../src/merchant/store/index.js';
import { OrderNotFound } from '../../src/merchant/store/index.js';
import type { Plan } from '../../src/merchant/store/orders.js';

/**
 * Orders and attempts in memory, with the store's contract for what checkout and apply use: a
 * transition sees copies and writes the whole change or nothing. For fast unit tests of checkout's
 * branches through the real apply path (decide included); the store's own tests hold the MySQL one
 * to the same contract.
 */
export class MemoryStore {
  readonly orders = new Map<string, OrderRecord>();
  readonly attempts = new Map<string, AttemptRecord>();
  readonly history: (NonNullable<Change['history']> & { statusBefore: string; statusAfter: string })[] = [];
  /** Each attempt's dispute records and reversals, as the dispute rule keeps them (orders/disputes.ts). */
  readonly disputes = new Map<string, DisputeBook>();
  #next = 0;

  constructor(private readonly now: () => number = () => Date.UTC(2026, 10, 24, 12)) {}

  order(over: Partial<OrderRecord> = {}): OrderRecord {
    const id = `ord_${++this.#next}`;
    const order: OrderRecord = {
      id,
      merchant_id: null,
      reference: id,
      amount_minor: 1234,
      currency: 'EUR',
      description: null,
      customer: null,
      status: 'pending',
      captured_minor: null,
      refunded_minor: 0,
      disputed_minor: 0,
      failure_code: null,
      needs_review: false,
      review_reason: null,
      resolved_reasons: null,
      review_resolution: null,
      review_resolved_by: null,
      review_resolved_at: null,
      current_attempt_id: null,
      version: 1,
      next_poll_at: null,
      closed_reason: null,
      closed_at: null,
      created_at: new Date(this.now()),
      updated_at: new Date(this.now()),
      ...over,
    };
    this.orders.set(id, order);
    return { ...order };
  }

  /** What checkout and apply are given. */
  get port(): CheckoutStore & ApplyStore {
    const find = async (id: string) => this.#copy(this.orders.get(id));
    return {
      orders: {
        find,
        startAttempt: async (orderId, input) => this.#startAttempt(orderId, input),
        withdrawAttempt: async (orderId, attemptId, previous) => this.#withdraw(orderId, attemptId, previous),
        // A batch is its steps in turn; each answers its result or its own error.
        transitionMany: async (steps) =>
          steps.map((s) => {
            try {
              return this.#transition(s.target, s.plan);
            } catch (error) {
              return error as Error;
            }
          }),
      },
      attempts: {
        get: async (id) => this.#copy(this.attempts.get(id)),
        by: async (key, value) => this.#copy([...this.attempts.values()].find((a) => a[key] === value)),
        holdingMany: async (asks) => asks.map((a) => this.#holding(a.transactionIds, a.reference)),
      },
      holds: {
        put: async () => {},
        take: async () => ({ kind: 'gone' }) as const,
        expired: async () => [],
      },
      operations: {
        find: async () => null,
        unanswered: async () => null,
        create: async () => {
          throw new Error('not in memory');
        },
        settle: async () => {
          throw new Error('not in memory');
        },
      },
      savedCards: {
        remember: async () => {
          throw new Error('not in memory');
        },
      },
    };
  }

  #holding(ids: string[], reference: string | null): AttemptRecord[] {
    const order =
      reference === null ? null : [...this.orders.values()].find((o) => o.reference === reference);
    return [...this.attempts.values()]
      .filter((a) => a.gateway_transaction_id !== null && ids.includes(a.gateway_transaction_id))
      .filter((a) => reference === null || a.order_id === order?.id)
      .sort((a, b) => Number(b.id === order?.current_attempt_id) - Number(a.id === order?.current_attempt_id))
      .slice(0, 2)
      .map((a) => ({ ...a }));
  }

  #copy<T extends object>(record: T | undefined): T | null {
    return record ? { ...record } : null;
  }

  #startAttempt(
    orderId: string,
    input: {
      kind: 'card' | 'redirect';
      mode?: 'sale' | 'auth';
      paymentMethod?: string;
      savedCardId?: string;
    },
  ) {
    const order = this.orders.get(orderId);
    if (!order) throw new OrderNotFound(orderId);
    const previous = beforeAttempt(order);
    const attempt = newAttempt(`att_${++this.#next}`, orderId, input, new Date(this.now()));
    this.attempts.set(attempt.id, attempt);
    Object.assign(order, {
      status: 'pending',
      current_attempt_id: attempt.id,
      failure_code: null,
      captured_minor: null,
      refunded_minor: 0,
      next_poll_at: null,
      version: order.version + 1,
    });
    // Holds are not kept in memory (holds.put does nothing): none to replace.
    return { order: { ...order }, attempt: { ...attempt }, previous, replacedChallenges: [] };
  }

  #withdraw(orderId: string, attemptId: string, previous: OrderBeforeAttempt) {
    const order = this.orders.get(orderId)!;
    if (order.current_attempt_id !== attemptId) return;
    this.attempts.delete(attemptId);
    Object.assign(order, previous, { version: order.version + 1 });
  }

  #transition<T>(target: TransitionTarget, plan: Plan<T>): Transitioned<T> | null {
    const order =
      'reference' in target
        ? [...this.orders.values()].find((o) => o.reference === target.reference)
        : this.orders.get(target.orderId);
    const attemptId = 'reference' in target ? order?.current_attempt_id : target.attemptId;
    const attempt = attemptId ? this.attempts.get(attemptId) : undefined;
    if (!order || !attempt || attempt.order_id !== order.id) {
      if ('reference' in target) return null;
      throw new OrderNotFound(`order ${target.orderId} has no attempt ${target.attemptId}`);
    }
    const now = new Date(this.now());
    const book = this.disputes.get(attempt.id) ?? EMPTY_BOOK;
    const { change, result } = plan({ ...order }, { ...attempt }, now, book);
    if (change?.dispute?.kind === 'gateway')
      this.disputes.set(
        attempt.id,
        bookAfter(book, change.dispute.plan, () => `dsp_${++this.#next}`),
      );
    for (const [column, id] of Object.entries(change?.release ?? {}))
      for (const other of this.attempts.values())
        if (
          other.order_id === order.id &&
          other.id !== attempt.id &&
          other[column as keyof AttemptRecord] === id
        )
          Object.assign(other, { [column]: null });
    if (change?.attempt && Object.keys(change.attempt).length > 0)
      Object.assign(attempt, change.attempt, { updated_at: now });
    const before = order.status;
    const changed = Object.entries(change?.order ?? {}).filter(
      ([k, v]) => order[k as keyof OrderRecord] !== v,
    );
    if (changed.length > 0)
      Object.assign(order, Object.fromEntries(changed), { version: order.version + 1, updated_at: now });
    if (change?.history)
      this.history.push({ ...change.history, statusBefore: before, statusAfter: order.status });
    return { result, order: { ...order }, attempt: { ...attempt } };
  }
}
