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
  /** An auth's deadline to be captured or voided (ms; sandbox.md section 11); null or absent otherwise. */
  captureBefore?: number | null;
  /** What a chargeback took (`chargeback_amount`, sandbox.md section 11); absent where the gateway omits it. */
  chargebackMinor?: number | null;
  /** When the gateway last changed the record (its `updated_at`, ms): orders a chargeback and its reversal. */
  updatedAt?: number | null;
}

interface Seen {
  source: ObservationSource;
  /** The event id, the request or attempt step, or `poll:<attempt>:<ms>`: what makes a duplicate a duplicate. */
  sourceId: string;
  observedAt: number;
}

/** The gateway's ids for an attempt, as an answer to the kit's own call told them. */
export interface GatewayIds {
  verificationId?: string;
  transactionId?: string;
  paymentSessionId?: string;
  /** A session's `expires_at` (ms): the poller asks right after it. */
  sessionExpiresAt?: number;
  /**
   * The gateway's page the shopper is sent to (the 3DS challenge, the hosted checkout): what the
   * order's `next_action` names while it waits on them, to a shopper who comes back later too.
   */
  actionUrl?: string;
}

/** The longest page address an attempt keeps (its column); a longer one is only in the payment's answer. */
export const ACTION_URL_MAX = 2048;

/**
 * Which attempt of which order the kit asked the gateway about (its own calls, its polls): the
 * observation is applied to that attempt, and the ids the answer named that the attempt does not
 * hold yet are written with the change, in the same transaction.
 */
export interface About {
  orderId: string;
  attemptId: string;
  ids?: GatewayIds;
  /**
   * The ids name a payment this attempt did not start itself (an ERR_DUPLICATE adopted): only the
   * order's current attempt takes it; a superseded one (a 3DS return of an abandoned attempt) does not.
   */
  adopt?: boolean;
}

/** A gateway transaction record, from an event, a poll or an answer. */
export interface TransactionObservation extends Seen {
  transaction: TransactionFact;
  /**
   * The gateway event's type, when the record came in one (its replays and recoveries too): a
   * reversal is told apart from any other record of a captured payment only by its event
   * (`transaction.chargeback_reversed`, orders/disputes.ts).
   */
  eventType?: string;
  /** A payment session's own status, when the observation came from one (it tells expired from cancelled). */
  sessionStatus?: string;
  /** Set when the kit asked about one of its attempts; an event is matched by its transaction instead. */
  about?: About;
  /**
   * Where the event it was read from held a card number outside the gateway's ids, truncated before
   * the event was kept (event-masking.ts): the order's history says so. Absent for most.
   */
  masked?: readonly string[];
  /**
   * The merchant whose webhook endpoint the event came to (issue 45, platform mode: the inbox row's
   * `merchant_id`); it may change only that merchant's orders. Absent: not an event (the kit's own
   * calls and polls ask through the order's own merchant), or the kit's one merchant; null: the first.
   */
  merchant?: number | null;
}

/**
 * What the kit's own calls found about an attempt that no transaction record says (decide's rule for
 * findings): before any transaction existed, a 3DS challenge to answer or a refusal that recorded
 * nothing (a failed or timed-out 3DS, a decline before the transaction, a gateway that could not be
 * reached); or, from a poll, something a person must look at (the gateway does not know an id the
 * attempt holds; an order open 30 days, no longer polled); or, from an event, gateway money no
 * attempt holds that carries the order's reference (issue 19): its source is the event's.
 */
export interface AttemptObservation extends Seen {
  about: About;
  finding: PaymentFinding | ReviewFinding;
}

export interface PaymentFinding {
  status: 'requires_action' | 'failed';
  code: string | null;
}

export interface ReviewFinding {
  review: string;
  /** The schedule is over: the order is no longer polled. */
  stopPolling?: boolean;
}

export type Observation = TransactionObservation | AttemptObservation;

export const isFinding = (obs: Observation): obs is AttemptObservation => 'finding' in obs;

export const isReview = (finding: AttemptObservation['finding']): finding is ReviewFinding =>
  'review' in finding;
