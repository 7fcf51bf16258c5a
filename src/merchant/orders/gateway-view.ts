import type { ObservationSource, TransactionObservation } from './observation.js';

/**
 * What the gateway last said about an attempt's own transaction (the sale, auth or session sale), in
 * the gateway's words: its status (`pending`, `auth`, `captured`, `refunded`, `voided`, `failed`,
 * `cancelled`, `chargeback`) and amounts. The reconciliation report sets it beside the order.
 */
export interface GatewayView {
  status: string;
  amountMinor: number;
  currency: string;
  /** Known from a sale's record or a capture's; null while no record has said how much. */
  capturedMinor: number | null;
  refundedMinor: number;
  observedAt: number;
  source: ObservationSource;
}

/**
 * The view after one more observation. A child record (capture, refund, void, a capture charged back)
 * says what became of its parent: captured for that amount, refunded as far as the running total,
 * voided. Pure; the caller leaves out observations older than what the attempt knows (stale).
 */
export function viewAfter(
  previous: GatewayView | null,
  obs: TransactionObservation,
  attempt: { transactionId: string | null; sale: boolean },
): GatewayView | null {
  const t = obs.transaction;
  const seen = { observedAt: obs.observedAt, source: obs.source };
  if (t.id === attempt.transactionId) {
    const captured =
      attempt.sale && ['captured', 'refunded', 'chargeback'].includes(t.status) ? t.amountMinor : null;
    return {
      status: t.status,
      amountMinor: t.amountMinor,
      currency: t.currency,
      capturedMinor: captured ?? previous?.capturedMinor ?? null,
      refundedMinor: Math.max(t.refundedMinor, previous?.refundedMinor ?? 0),
      ...seen,
    };
  }
  if (!previous) return null; // a child's record says nothing of the parent's own amount
  const refundedMinor = Math.max(t.refundedMinor, previous.refundedMinor);
  switch (t.type) {
    case 'capture':
      return {
        ...previous,
        status:
          t.status === 'chargeback'
            ? 'chargeback'
            : refundedMinor >= t.amountMinor && refundedMinor > 0
              ? 'refunded'
              : 'captured',
        capturedMinor: t.amountMinor,
        refundedMinor,
        ...seen,
      };
    case 'refund': {
      const captured = previous.capturedMinor;
      const full = captured !== null && refundedMinor >= captured;
      return { ...previous, status: full ? 'refunded' : previous.status, refundedMinor, ...seen };
    }
    case 'void':
      return { ...previous, status: 'voided', ...seen };
    default:
      return { ...previous, ...seen };
  }
}
