import type { PaymentState } from './decide.js';

/** Where a dispute stands: the bank's case is open, the merchant won it (reversed), or lost it. */
export const DISPUTE_OUTCOMES = ['open', 'won', 'lost'] as const;
export type DisputeOutcome = (typeof DISPUTE_OUTCOMES)[number];

/**
 * What a change of a payment's state does to its dispute record. A chargeback opens one with its
 * amount; a later record with another amount corrects it; a reversal (the payment is no longer
 * disputed: the gateway made it captured again) closes it `won`. A lost dispute is not news from the
 * gateway (sandbox.md section 11: "changes nothing further"): an operator says so. Pure.
 */
export type DisputeStep =
  | { kind: 'opened'; amountMinor: number }
  | { kind: 'amount'; amountMinor: number }
  | { kind: 'won' };

export function disputeStep(before: PaymentState, after: PaymentState): DisputeStep | null {
  const was = before.status === 'disputed';
  const is = after.status === 'disputed';
  if (!was && is) return { kind: 'opened', amountMinor: after.disputedMinor };
  if (was && !is) return { kind: 'won' };
  if (was && is && before.disputedMinor !== after.disputedMinor)
    return { kind: 'amount', amountMinor: after.disputedMinor };
  return null;
}
