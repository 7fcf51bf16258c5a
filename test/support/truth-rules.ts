/**
 * What "an order equals the gateway's truth" and "nothing applied twice" mean, as plain functions of
 * records: the in-process tests (truth.ts, reading the embedded sandbox's state) and the chaos run
 * (reading a sandbox in another process over its API) judge by the same rules.
 */

export interface Truth {
  status: string;
  captured: number | null;
  refunded: number;
  /**
   * What a chargeback took (0 unless disputed); absent when one side does not say it: a gateway
   * without `chargeback_amount`, or a kit whose orders do not keep it (`disputed_minor`).
   */
  disputed?: number;
}

/** The gateway's record of the payment an attempt made (the sale, the auth, or a session's transaction). */
export interface PaymentRecord {
  type: string;
  status: string;
  amount: number;
  /** The running total refunded. */
  refunded: number;
  /** An auth's capture record's amount; null when none (or the payment is not an auth). */
  captureAmount: number | null;
  /** An approved auth's deadline (sandbox.md section 11); null or absent on every other record. */
  captureBefore?: string | number | null;
  /** `chargeback_amount` (sandbox.md section 11): 0 when none; null or absent when the gateway does not say. */
  chargeback?: number | null;
}

/** What the order of an attempt of `kind` should show, given the gateway's record (and session). */
export function truthOfPayment(kind: string, payment: PaymentRecord, sessionStatus?: string): Truth {
  const captured = payment.type === 'sale' ? payment.amount : payment.captureAmount;
  const { refunded } = payment;
  const open = (status: string): Truth => ({ status, captured: null, refunded: 0 });
  const disputed = typeof payment.chargeback === 'number' ? payment.chargeback : undefined;
  const money = (status: string): Truth => ({
    status,
    captured,
    refunded,
    ...(disputed === undefined ? {} : { disputed: status === 'disputed' ? disputed : 0 }),
  });
  switch (payment.status) {
    case 'pending':
      return open(kind === 'redirect' ? 'requires_action' : 'pending');
    case 'auth':
      return open('authorized');
    case 'captured': // a reversed chargeback too: the merchant won, the money is the shop's again
      return money(refunded === 0 ? 'paid' : 'partially_refunded');
    case 'refunded':
      return money('refunded');
    case 'chargeback':
      return money('disputed');
    case 'voided':
      return open('voided');
    case 'failed':
      return open('failed');
    case 'cancelled': {
      // An approved auth (the only record with a deadline) is cancelled only by lapsing.
      const lapsed = payment.type === 'auth' && payment.captureBefore != null;
      return open(sessionStatus === 'expired' || lapsed ? 'expired' : 'cancelled');
    }
    default:
      throw new Error(`a gateway status this check does not know: ${payment.status}`);
  }
}

/** An order's columns as the kit stores them (MariaDB: BIGINT as numbers or strings, BOOLEAN as 0/1). */
export interface OrderColumns {
  status: string;
  captured_minor: number | string | null;
  refunded_minor: number | string;
  /** What a chargeback took; absent on a kit that does not keep it. */
  disputed_minor?: number | string | null;
}

const MONEY_STATES = ['paid', 'partially_refunded', 'refunded', 'disputed'];

/**
 * The order and its truth in one shape, to compare: money is compared only in the states that have
 * it, and what a chargeback took only when both sides say it. An expired session may read
 * `cancelled` when the kit learned it from the transaction's event, which says cancelled (only the
 * session says expired).
 */
export function comparison(order: OrderColumns, truth: Truth): { got: Truth; want: Truth } {
  const got: Truth = {
    status: order.status,
    captured: order.captured_minor === null ? null : Number(order.captured_minor),
    refunded: Number(order.refunded_minor),
  };
  const { disputed, ...rest } = truth;
  const bothSay = disputed !== undefined && order.disputed_minor != null;
  if (bothSay) got.disputed = Number(order.disputed_minor);
  const want: Truth = MONEY_STATES.includes(truth.status)
    ? { ...rest, ...(bothSay ? { disputed } : {}) }
    : {
        ...rest,
        captured: got.captured,
        refunded: got.refunded,
        ...(bothSay ? { disputed: got.disputed } : {}),
      };
  if (want.status === 'expired' && got.status === 'cancelled') want.status = 'cancelled';
  // An order that ended (issue 43) stands for a payment without money: one that failed, was
  // cancelled, expired or voided, or is still open at the gateway (a hosted page closed under it).
  if (got.status === 'closed' && !HOLDING.includes(want.status)) want.status = 'closed';
  return { got, want };
}

/** Gateway truths with money held or moved: a closed order must not stand for one. */
const HOLDING = [...MONEY_STATES, 'authorized'];

export const sameTruth = (a: Truth, b: Truth) =>
  a.status === b.status &&
  a.captured === b.captured &&
  a.refunded === b.refunded &&
  a.disputed === b.disputed;

/** A line of order_history, as much of it as the check reads. */
export interface HistoryLine {
  order_id: string;
  source_id: string;
  status_before: string;
  status_after: string;
  outcome: string;
}

const ENTERED_ONCE = ['authorized', 'paid', 'voided', 'disputed', 'refunded', 'expired', 'cancelled'];

/**
 * What was applied twice, one line each: a gateway event applied more than once, whichever way it
 * came (webhook, replay, recovery), or an order moved into the same money state twice. Empty: none.
 */
export function appliedTwice(history: readonly HistoryLine[]): string[] {
  const applied = history.filter((h) => h.outcome === 'applied');
  const byEvent = new Map<string, number>();
  for (const h of applied)
    if (h.source_id.startsWith('evt_')) byEvent.set(h.source_id, (byEvent.get(h.source_id) ?? 0) + 1);
  const into = new Map<string, number>();
  for (const h of applied) {
    if (!ENTERED_ONCE.includes(h.status_after)) continue;
    if (h.status_before === h.status_after) continue; // a superseded attempt's own record
    if (h.status_before === 'disputed') continue; // a chargeback reversed: paid again, once more
    const key = `${h.order_id} -> ${h.status_after}`;
    into.set(key, (into.get(key) ?? 0) + 1);
  }
  return [
    ...[...byEvent].filter(([, n]) => n > 1).map(([event, n]) => `event ${event} applied ${n} times`),
    ...[...into].filter(([, n]) => n > 1).map(([key, n]) => `${key}, ${n} times`),
  ];
}
