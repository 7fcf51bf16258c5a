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
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Statuses after which a new payment attempt may start (merchant.md: "a new attempt may follow"). */
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

/**
 * The one status change that is not an observation: a new payment attempt, which supersedes the last
 * and puts the order back to pending. Everything after it is learned from the gateway, through
 * `decide`. Throws when the order is past paying for.
 */
export function statusOnNewAttempt(current: OrderStatus): OrderStatus {
  if (!RETRYABLE.includes(current))
    throw new InvalidTransition(current, RETRYABLE, 'start a payment attempt');
  return 'pending';
}
