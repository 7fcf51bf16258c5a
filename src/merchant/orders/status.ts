/** merchant.md, Orders: what an order can be. */
export const ORDER_STATUSES = [
  'pending',
  'requires_action',
  'authorized',
  'paid',
  'partially_refunded',
  'refunded',
  'voided',
  'failed',
  'cancelled',
  'expired',
  'disputed',
  'closed',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/**
 * Why an order ended (issue 43, part 2): `cancelled` by the shop or an operator, `expired` by
 * ORDER_TTL. An order's own fact, apart from its payments' statuses (a payment `cancelled` or
 * `expired` ends an attempt, and a new one may follow; a `closed` order takes none).
 */
export const CLOSE_REASONS = ['cancelled', 'expired'] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];

/**
 * Statuses where the payment holds money or moved it: an authorisation held, a capture, a refund, a
 * chargeback. An order there is not ended by the clock or a cancel, and money that reaches a closed
 * order wins over its closing.
 */
export const WITH_MONEY: readonly OrderStatus[] = [
  'authorized',
  'paid',
  'partially_refunded',
  'refunded',
  'disputed',
];

/**
 * Statuses after which a new payment attempt may start (merchant.md: "a new attempt may follow").
 * Never `closed`: an order that ended takes no attempt.
 */
export const RETRYABLE: readonly OrderStatus[] = [
  'pending',
  'requires_action',
  'failed',
  'cancelled',
  'expired',
];

/** Statuses a poller keeps watching: the gateway may still move them. */
export const OPEN: readonly OrderStatus[] = ['pending', 'requires_action', 'authorized'];

export class InvalidTransition extends Error {
  override name = 'InvalidTransition';
  constructor(
    readonly current: OrderStatus,
    readonly allowed: readonly OrderStatus[],
    action: string,
  ) {
    super(`cannot ${action} while the order is ${current}; allowed from ${allowed.join(', ')}`);
  }
}

/** A payment attempt asked of an order that ended: 409 ORDER_CLOSED, not a state to wait out. */
export class OrderClosed extends InvalidTransition {
  override name = 'OrderClosed';
  constructor(readonly reason: CloseReason | null) {
    super('closed', RETRYABLE, 'start a payment attempt');
  }
}

/**
 * The one status change that is not an observation: a new payment attempt, which supersedes the last
 * and puts the order back to pending. Everything after it is learned from the gateway, through
 * `decide`. Throws when the order is past paying for (OrderClosed once it ended). `adopting`: the
 * attempt takes over money the gateway already holds (an operator attaching it), which a closed
 * order takes too, staying closed until `decide` applies the money (and flags it).
 */
export function statusOnNewAttempt(
  order: { status: OrderStatus; closedReason: CloseReason | null },
  adopting = false,
): OrderStatus {
  if (order.status === 'closed') {
    if (adopting) return 'closed';
    throw new OrderClosed(order.closedReason);
  }
  if (!RETRYABLE.includes(order.status))
    throw new InvalidTransition(order.status, RETRYABLE, 'start a payment attempt');
  return 'pending';
}
