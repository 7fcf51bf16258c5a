/**
 * What anyone learns about a gateway transaction: a webhook event, a replay, a recovered event, a
 * status poll or an API answer all become this one type (DESIGN.md section 2).
 */
export type ObservationSource = 'webhook' | 'replay' | 'poll' | 'api' | 'recovery';

export interface TransactionFact {
  /** Gateway ids are opaque strings. */
  id: string;
  relatedId: string | null;
  type: string;
  status: string;
  amountMinor: number;
  currency: string;
  /** The gateway's running total for the payment (never summed from events). */
  refundedMinor: number;
  /** The decline code of a failed transaction, when the record carries one. */
  statusReason?: string | null;
  /** The merchant's reference (`merchant_trans_id`): the order it belongs to. */
  reference?: string | null;
}

export interface Observation {
  source: ObservationSource;
  /** The event id, the request id, or `poll:<order>:<slot>`: what makes a duplicate a duplicate. */
  sourceId: string;
  observedAt: number;
  transaction: TransactionFact;
  /** A payment session's own status, when the observation came from one (it tells expired from cancelled). */
  sessionStatus?: string;
}
