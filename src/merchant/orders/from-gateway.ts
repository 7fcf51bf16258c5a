import type { GatewayPaymentSession, GatewayTransaction } from '../../client/schemas.js';
import type { Observation, ObservationSource } from './observation.js';

/** A gateway transaction record, from any answer or payload, as an observation. */
export function observeTransaction(
  t: GatewayTransaction,
  source: ObservationSource,
  sourceId: string,
  now: number,
): Observation {
  return {
    source,
    sourceId,
    observedAt: now,
    transaction: {
      id: t.id,
      relatedId: t.related_trans_id,
      type: t.transaction_type,
      status: t.status,
      amountMinor: t.amount,
      currency: t.currency,
      refundedMinor: t.refunded_amount,
      statusReason: t.status_reason ?? null,
      reference: t.merchant_trans_id ?? null,
    },
  };
}

/** What a payment session's status says about its linked sale (gateway-api.md, States). */
const SESSION_TO_TRANSACTION: Record<string, string> = {
  created: 'pending',
  pending_redirect: 'pending',
  pending_provider: 'pending',
  paid: 'captured',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'cancelled',
  chargeback: 'chargeback',
};

/** A payment session, as an observation of its linked transaction; an unknown session status stays unknown. */
export function observeSession(
  s: GatewayPaymentSession,
  source: ObservationSource,
  sourceId: string,
  now: number,
): Observation {
  return {
    source,
    sourceId,
    observedAt: now,
    sessionStatus: s.status,
    transaction: {
      id: s.transaction_id,
      relatedId: null,
      type: 'sale',
      status: SESSION_TO_TRANSACTION[s.status] ?? s.status,
      amountMinor: s.amount,
      currency: s.currency,
      refundedMinor: 0,
      reference: s.merchant_reference ?? null,
    },
  };
}
