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

/** The moves the checkout makes itself, before the gateway has a transaction to observe. */
export type LocalEvent = 'attempt_started' | 'action_required' | 'attempt_failed';

const LOCAL: Record<LocalEvent, { from: readonly OrderStatus[]; to: OrderStatus }> = {
  attempt_started: { from: RETRYABLE, to: 'pending' },
  action_required: { from: ['pending'], to: 'requires_action' },
  attempt_failed: { from: ['pending', 'requires_action'], to: 'failed' },
};

export class InvalidTransition extends Error {
  override name = 'InvalidTransition';
  constructor(
    readonly current: OrderStatus,
    readonly allowed: readonly OrderStatus[],
    event: string,
  ) {
    super(
      `cannot ${event.replace('_', ' ')} while the order is ${current}; allowed from ${allowed.join(', ')}`,
    );
  }
}

export function localTransition(current: OrderStatus, event: LocalEvent): OrderStatus {
  const rule = LOCAL[event];
  if (!rule.from.includes(current)) throw new InvalidTransition(current, rule.from, event);
  return rule.to;
}
