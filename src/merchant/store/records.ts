import type { OperatorRole } from '../operators/roles.js';
import type { DisputeOutcome } from '../orders/disputes.js';
import type { OrderStatus } from '../orders/status.js';
import type { ATTEMPTS, INBOX, ORDERS, RecordOf } from './tables.js';

/**
 * What the store hands out: plain records, one per row, with the columns' names. No ORM type passes
 * this folder, so the rest of the kit can neither save a record by mistake nor depend on Sequelize.
 *
 * The hot tables' records (an order, a payment attempt, an inbox event) are derived from the tables'
 * one description (tables.ts), which carries their fields' notes.
 */
export interface OrderRecord extends RecordOf<typeof ORDERS> {}
export interface AttemptRecord extends RecordOf<typeof ATTEMPTS> {}
export interface InboxRecord extends RecordOf<typeof INBOX> {}

export type OperationKind = 'capture' | 'refund' | 'void';
export type OperationStatus = 'pending' | 'succeeded' | 'failed';

export interface OperationRecord {
  id: string;
  order_id: string;
  attempt_id: string;
  operation: OperationKind;
  /** Sent to the gateway as Idempotency-Key: stored before the call, reused on every retry. */
  idempotency_key: string;
  /** The operator's own Idempotency-Key (or the one the kit derives), as its digest: a retry finds this row. */
  request_key: string;
  amount_minor: number;
  reason: string | null;
  status: OperationStatus;
  result_transaction_id: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface HistoryRecord {
  id: number;
  order_id: string;
  attempt_id: string | null;
  source: string;
  source_id: string;
  status_before: string;
  status_after: string;
  outcome: string;
  detail: string | null;
  created_at: Date;
}

/** A named position a background job resumes from (recovery's checkpoint). */
export interface CheckpointRecord {
  name: string;
  value: string;
  updated_at: Date;
}

export interface SecretRecord {
  id: number;
  secret_sealed: string;
  label: string;
  /** The merchant whose endpoint signs with it; null: stored before platform mode (the first merchant's). */
  merchant_id: number | null;
  active: boolean;
  created_at: Date;
  retired_at: Date | null;
}

/**
 * A chargeback of an attempt's payment (issue 19, part 2): opened by the gateway's chargeback, closed
 * `won` by its reversal or `lost` by an operator. Its amount is what the bank took back.
 */
export interface DisputeRecord {
  id: string;
  order_id: string;
  attempt_id: string;
  transaction_id: string | null;
  amount_minor: number;
  currency: string;
  outcome: DisputeOutcome;
  /**
   * The gateway's time of the chargeback (its record's `updated_at`): with the attempt, what names
   * the chargeback (orders/disputes.ts). Null where the record that told it had no time (a session).
   */
  charged_back_at: Date | null;
  /** The chargeback's time at the gateway, else when the kit learned of it. */
  opened_at: Date;
  /** A won one: the reversal's time at the gateway; a lost one: when an operator said so. */
  closed_at: Date | null;
  /** Who closed it: `gateway` for a reversal, else the operator. */
  closed_by: string | null;
  note: string | null;
}

/**
 * A reversal of a chargeback the gateway announced (`transaction.chargeback_reversed`), by its time:
 * kept apart from the records, since it may arrive before the chargeback it ends (orders/disputes.ts).
 */
export interface ReversalRecord {
  order_id: string;
  attempt_id: string;
  reversed_at: Date;
}

/** What an operator made of gateway money with no order: still open, attached to an order, or resolved. */
export type UnmatchedResolution = 'open' | 'attached' | 'resolved';
export const UNMATCHED_RESOLUTIONS: readonly UnmatchedResolution[] = ['open', 'attached', 'resolved'];

/**
 * A gateway transaction that names money and that no attempt of the kit holds (issue 19, part 1): one
 * row per transaction, with what the gateway said of it (the latest news, never replaced by older) and
 * its payment's money as an order's is read (issue 44).
 */
export interface UnmatchedMoneyRecord {
  id: string;
  transaction_id: string;
  /** The merchant reference its record carries; null when it carries none. */
  reference: string | null;
  related_transaction_id: string | null;
  transaction_type: string;
  status: string;
  status_reason: string | null;
  amount_minor: number;
  /** The payment's running refunded total (decide's PaymentState.refundedMinor: it only grows). */
  refunded_minor: number;
  currency: string;
  capture_before: Date | null;
  /**
   * Its payment as decide's rules read the records of it (issue 44; orders/unmatched-money.ts
   * keptAfter): `paid`, `partially_refunded`, `refunded`, `disputed`, `authorized`, `voided`, ...
   */
  payment_status: OrderStatus;
  /** What a sale or a capture took; null while no record has said (an auth, a refund's record). */
  captured_minor: number | null;
  /** What a chargeback took while the payment is disputed; 0 otherwise (a won dispute gives it back). */
  disputed_minor: number;
  /** The gateway's time of the latest record seen once money moved: orders a chargeback and its reversal. */
  money_at: Date | null;
  /** The last observation that told of it: its source and the source's id (an event id). */
  source: string;
  source_id: string;
  first_seen_at: Date;
  last_seen_at: Date;
  seen_count: number;
  /** The order whose reference it carries (null: none does); once attached, the order it went to. */
  order_id: string | null;
  resolution: UnmatchedResolution;
  resolved_note: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  /**
   * The merchant whose webhook endpoint the event that found it came to (issue 45, platform mode);
   * null: the kit's first merchant (GATEWAY_MERCHANTS' first), or the key's own account in a kit of one.
   */
  merchant_id: number | null;
}

/** A named operator's token (issue, part 2): who, which role; only the token's SHA-256 is kept. */
export interface OperatorRecord {
  id: string;
  name: string;
  role: OperatorRole;
  /**
   * The merchants the token is scoped to (issue 45, part 2): it sees their orders and customers
   * alone. Null: every merchant the kit serves.
   */
  merchant_ids: number[] | null;
  token_hash: string;
  /** The name while the token is live; null once revoked (one live token per name). */
  active_name: string | null;
  created_at: Date;
  created_by: string;
  revoked_at: Date | null;
  revoked_by: string | null;
}

/**
 * A customer's saved card: the kit's id for a gateway payment instrument (issue 21). The vault token
 * is never part of the record: only the saved-card store opens it, to pay.
 */
export interface SavedCardRecord {
  id: string;
  customer_id: string;
  /**
   * The merchant whose customer it is (issue 45): a customer id names a customer of one merchant.
   * Null: saved before platform mode, or for a key whose merchant id is unknown: the kit's first.
   */
  merchant_id: number | null;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  status: 'active' | 'revoked';
  saved_by_order_id: string | null;
  created_at: Date;
  updated_at: Date;
  revoked_at: Date | null;
  revoked_by: string | null;
}

/**
 * A payment link of an order (issue 43, part 3): what it pays with and until when. Its token is kept
 * as a hash alone, and stays out of the record.
 */
export interface PaymentLinkRecord {
  id: string;
  order_id: string;
  payment_method: string;
  expires_at: Date;
  created_at: Date;
  /** Who made it, as the history names them: `name (role)`. */
  created_by: string;
}

/** What the audit keeps of an act. */
export type AuditAction =
  | 'capture'
  | 'refund'
  | 'void'
  | 'review.resolve'
  | 'unmatched.attach'
  | 'unmatched.resolve'
  | 'dispute.lost'
  | 'operator.add'
  | 'operator.revoke'
  | 'card.revoke'
  | 'card.charge'
  /** A customer token minted (the credential that vouched, the customer, the order it pays if any). */
  | 'customer.vouch'
  /** A saved card paying an order with the shopper there, on a token minted for it. */
  | 'card.pay'
  /** A customer's personal data erased (issue 43): the subject is their reference (`cer_`), never their id. */
  | 'customer.erase'
  /** An order cancelled (POST /orders/{id}/cancel): closed, its authorisation voided first if it had one. */
  | 'order.cancel'
  /** A payment link made for an order (POST /orders/{id}/payment-link): the subject is the link (`plk_`). */
  | 'order.payment_link';

/** One line of the audit log: who (name, role, credential) did what, on what, and why. */
export interface AuditRecord {
  id: number;
  at: Date;
  actor: string;
  role: string;
  credential: string;
  action: AuditAction;
  order_id: string | null;
  subject_id: string | null;
  amount_minor: number | null;
  currency: string | null;
  reason: string | null;
  detail: string | null;
  request_id: string | null;
}
