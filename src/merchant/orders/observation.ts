/**
 * What anyone learns about a payment: a webhook event, a replay, a recovered event, a status poll or
 * an API answer all become this one type (DESIGN.md section 2), and `decide` is the only judge of it.
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

interface Seen {
  source: ObservationSource;
  /** The event id, the request or attempt step, or `poll:<attempt>:<ms>`: what makes a duplicate a duplicate. */
  sourceId: string;
  observedAt: number;
}

/** A gateway transaction record, from an event, a poll or an answer. */
export interface TransactionObservation extends Seen {
  transaction: TransactionFact;
  /** A payment session's own status, when the observation came from one (it tells expired from cancelled). */
  sessionStatus?: string;
}

/**
 * What the gateway answered about an attempt before any transaction existed for it (decide's rule
 * for findings): a 3DS challenge to answer, or a refusal that recorded nothing (a failed or timed-out
 * 3DS, a decline before the transaction, a gateway that could not be reached). Only the kit's own
 * calls produce these.
 */
export interface AttemptObservation extends Seen {
  source: 'api';
  attemptId: string;
  finding: { status: 'requires_action' | 'failed'; code: string | null };
}

export type Observation = TransactionObservation | AttemptObservation;

export const isFinding = (obs: Observation): obs is AttemptObservation => 'finding' in obs;
