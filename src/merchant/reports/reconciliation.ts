import { type CurrencyCode, formatMinor, isCurrencyCode } from '../../shared/money.js';
import type { DisputeOutcome } from '../orders/disputes.js';
import { merchantOf } from '../orders/order-merchant.js';
import type { ReviewResolution } from '../orders/review.js';
import type { AttemptRecord, DisputeRecord, OrderRecord } from '../store/records.js';

/**
 * The finance reconciliation report (merchant.md, HTTP interface): each order beside what the gateway
 * last said of its payment, classified. Pure: rows and totals from records.
 *
 * - `matched`: the order and the gateway agree (or nothing ever reached the gateway).
 * - `in_flight`: a matter of timing: the gateway has not finished (a session or a challenge still
 *   open), or has not yet said everything (a capture's amount): they will agree once events land.
 * - `mismatched`: an integrity problem a person must look at: another amount or currency, a second
 *   capture, money on a superseded attempt, anything the reconciler flagged (`needs_review`).
 * - `resolved`: the order and the gateway still disagree, and a person has resolved the order's
 *   review (`review` says how: an accepted difference, one written off...): decided, no longer
 *   open. Only until the order is flagged again: a new finding is `mismatched` anew.
 */
export type Classification = 'matched' | 'in_flight' | 'mismatched' | 'resolved';

/** The order's review: `open` while it is flagged, else what a person last decided; null: never resolved. */
export type ReviewColumn = 'open' | ReviewResolution | null;

export interface ReportRow {
  order_id: string;
  reference: string;
  created_at: string;
  status: string;
  currency: string;
  amount: number;
  amount_formatted: string;
  captured_amount: number | null;
  captured_amount_formatted: string | null;
  refunded_amount: number;
  refunded_amount_formatted: string;
  /** What a chargeback took back while the order is disputed (open or lost); 0 otherwise. */
  disputed_amount: number;
  disputed_amount_formatted: string;
  /** The latest dispute of the order's payment: `open`, `won` or `lost`; null when it had none. */
  dispute_outcome: DisputeOutcome | null;
  gateway_transaction_id: string | null;
  gateway_status: string | null;
  gateway_currency: string | null;
  gateway_amount: number | null;
  gateway_amount_formatted: string | null;
  gateway_captured_amount: number | null;
  gateway_captured_amount_formatted: string | null;
  gateway_refunded_amount: number | null;
  gateway_refunded_amount_formatted: string | null;
  observed_at: string | null;
  observed_source: string | null;
  /** An authorized order's deadline to be captured or voided (sandbox.md section 11); null otherwise. */
  capture_before: string | null;
  classification: Classification;
  reason: string;
  match: boolean;
  review: ReviewColumn;
  /** Who made the decision `review` names, and when; null while the review is open or was never resolved. */
  reviewed_by: string | null;
  reviewed_at: string | null;
  /**
   * The gateway merchant whose order it is (platform mode, issue 45); an order made before platform
   * mode is the kit's first merchant's. Null: the kit does not know its key's own merchant id.
   */
  merchant_id: number | null;
}

/** The CSV's columns, in order: stable names (docs/finance.md lists them). */
export const REPORT_COLUMNS: readonly (keyof ReportRow)[] = [
  'order_id',
  'reference',
  'created_at',
  'status',
  'currency',
  'amount',
  'amount_formatted',
  'captured_amount',
  'captured_amount_formatted',
  'refunded_amount',
  'refunded_amount_formatted',
  'disputed_amount',
  'disputed_amount_formatted',
  'dispute_outcome',
  'gateway_transaction_id',
  'gateway_status',
  'gateway_currency',
  'gateway_amount',
  'gateway_amount_formatted',
  'gateway_captured_amount',
  'gateway_captured_amount_formatted',
  'gateway_refunded_amount',
  'gateway_refunded_amount_formatted',
  'observed_at',
  'observed_source',
  'capture_before',
  'classification',
  'reason',
  'match',
  'review',
  'reviewed_by',
  'reviewed_at',
  // Last: a spreadsheet that reads the columns by position before platform mode still reads them.
  'merchant_id',
];

export interface CurrencyTotals {
  currency: string;
  orders: number;
  captured: number;
  captured_formatted: string;
  refunded: number;
  refunded_formatted: string;
  /** What chargebacks took back, of orders disputed now (a dispute won gives it back). */
  disputed: number;
  disputed_formatted: string;
  /** Captured minus refunded minus disputed: what the shop keeps after chargebacks. */
  net: number;
  net_formatted: string;
  in_flight: number;
  mismatched: number;
  /** Orders that disagree with the gateway by a person's decision (`resolved`). */
  resolved: number;
}

/** The order statuses a gateway status may stand behind (the reconciler's mapping, read backwards). */
function statusesFor(gatewayStatus: string, refunded: number, captured: number | null): readonly string[] {
  switch (gatewayStatus) {
    case 'pending':
      return ['pending', 'requires_action'];
    case 'auth':
      return ['authorized'];
    case 'captured':
      return refunded === 0
        ? ['paid']
        : captured !== null && refunded >= captured
          ? ['refunded']
          : ['partially_refunded'];
    case 'refunded':
      return ['refunded'];
    case 'voided':
      return ['voided'];
    case 'failed':
      return ['failed'];
    case 'cancelled':
      return ['cancelled', 'expired']; // a session's own status tells which; its transaction says cancelled
    case 'chargeback':
      return ['disputed'];
    default:
      return [];
  }
}

/**
 * Classifies one order against the gateway's last word, with the reason in plain words. A flagged
 * order is `mismatched` with its review reason; one whose review a person resolved, and that still
 * disagrees, is `resolved` with what disagrees.
 */
export function classify(
  order: OrderRecord,
  attempt: AttemptRecord | null,
  expiry?: AuthExpiry,
): { classification: Classification; reason: string } {
  if (order.needs_review)
    return { classification: 'mismatched', reason: order.review_reason ?? 'flagged for review' };
  const compared = compare(order, attempt, expiry);
  if (compared.classification === 'mismatched' && order.review_resolution !== null)
    return { classification: 'resolved', reason: compared.reason };
  return compared;
}

/** The order beside its attempt's record of the gateway, its review apart. */
function compare(
  order: OrderRecord,
  attempt: AttemptRecord | null,
  expiry?: AuthExpiry,
): { classification: Classification; reason: string } {
  const verdict = (classification: Classification, reason: string) => ({ classification, reason });
  const atGateway =
    attempt && (attempt.gateway_transaction_id !== null || attempt.payment_session_id !== null);
  // A closed order with no money stands where its last payment does (issue 43, part 2).
  const closed = order.status === 'closed' ? `closed (${order.closed_reason ?? 'no reason'}) unpaid: ` : '';
  if (!atGateway) {
    if (order.status === 'requires_action')
      return verdict('in_flight', 'the customer has not finished the 3D Secure challenge');
    if (closed)
      return verdict('matched', `${closed}${attempt ? 'nothing reached the gateway' : 'no payment'}`);
    return verdict('matched', order.current_attempt_id ? 'nothing reached the gateway' : 'not paid for yet');
  }
  // Nothing recorded yet: an answer on its way, or an order older than the record (refresh asks).
  if (attempt.gateway_status === null)
    return verdict('in_flight', 'nothing the gateway said is recorded yet');
  if (attempt.gateway_currency !== order.currency)
    return verdict(
      'mismatched',
      `currency ${attempt.gateway_currency} at the gateway, ${order.currency} on the order`,
    );
  if (attempt.gateway_amount_minor !== order.amount_minor)
    return verdict(
      'mismatched',
      `amount ${attempt.gateway_amount_minor} at the gateway, ${order.amount_minor} on the order`,
    );
  const refunded = attempt.gateway_refunded_minor ?? 0;
  if (attempt.gateway_status === 'pending')
    return verdict('in_flight', `${closed}the gateway has not finished the payment`);
  const standing = closed ? attempt.status : order.status;
  if (!statusesFor(attempt.gateway_status, refunded, attempt.gateway_captured_minor).includes(standing))
    return verdict('mismatched', `the order is ${standing}, the gateway said ${attempt.gateway_status}`);
  const moneyMoved = ['captured', 'refunded', 'chargeback'].includes(attempt.gateway_status);
  if (moneyMoved && attempt.gateway_captured_minor === null)
    return verdict('in_flight', 'captured at the gateway; the amount comes with its event');
  if (moneyMoved && order.captured_minor !== attempt.gateway_captured_minor)
    return verdict(
      'mismatched',
      `captured ${order.captured_minor} on the order, ${attempt.gateway_captured_minor} at the gateway`,
    );
  if (order.refunded_minor !== refunded)
    return verdict('mismatched', `refunded ${order.refunded_minor} on the order, ${refunded} at the gateway`);
  // In agreement, and about to lapse: finance and operators are told before the money is gone.
  const deadline = attempt.capture_before?.getTime();
  if (
    expiry &&
    order.status === 'authorized' &&
    deadline !== undefined &&
    deadline - expiry.now <= expiry.warningMs
  )
    return verdict('matched', 'auth_expiring');
  return verdict('matched', closed ? `${closed}its payment ${standing}` : '');
}

/** When the report is made, and how close to its `capture_before` an authorisation counts as expiring. */
export interface AuthExpiry {
  now: number;
  warningMs: number;
}

const format = (minor: number | null, currency: string) =>
  minor === null || !isCurrencyCode(currency) ? null : formatMinor(minor, currency as CurrencyCode);

/**
 * One row. `served`: the merchants the kit acts for (GATEWAY_MERCHANTS), whose first an order that
 * names none belongs to; left out, the row shows the order's own `merchant_id`.
 */
export function reportRow(
  order: OrderRecord,
  attempt: AttemptRecord | null,
  expiry?: AuthExpiry,
  dispute: DisputeRecord | null = null,
  served: readonly number[] = [],
): ReportRow {
  const { classification, reason } = classify(order, attempt, expiry);
  const gatewayCurrency = attempt?.gateway_currency ?? null;
  const gateway = (minor: number | null | undefined) => format(minor ?? null, gatewayCurrency ?? '');
  return {
    order_id: order.id,
    reference: order.reference,
    created_at: order.created_at.toISOString(),
    status: order.status,
    currency: order.currency,
    amount: order.amount_minor,
    amount_formatted: format(order.amount_minor, order.currency) ?? '',
    captured_amount: order.captured_minor,
    captured_amount_formatted: format(order.captured_minor, order.currency),
    refunded_amount: order.refunded_minor,
    refunded_amount_formatted: format(order.refunded_minor, order.currency) ?? '',
    disputed_amount: order.disputed_minor,
    disputed_amount_formatted: format(order.disputed_minor, order.currency) ?? '',
    dispute_outcome: dispute?.outcome ?? null,
    gateway_transaction_id: attempt?.gateway_transaction_id ?? null,
    gateway_status: attempt?.gateway_status ?? null,
    gateway_currency: gatewayCurrency,
    gateway_amount: attempt?.gateway_amount_minor ?? null,
    gateway_amount_formatted: gateway(attempt?.gateway_amount_minor),
    gateway_captured_amount: attempt?.gateway_captured_minor ?? null,
    gateway_captured_amount_formatted: gateway(attempt?.gateway_captured_minor),
    gateway_refunded_amount: attempt?.gateway_refunded_minor ?? null,
    gateway_refunded_amount_formatted: gateway(attempt?.gateway_refunded_minor),
    observed_at: attempt?.observed_at?.toISOString() ?? null,
    observed_source: attempt?.observed_source ?? null,
    capture_before: order.status === 'authorized' ? (attempt?.capture_before?.toISOString() ?? null) : null,
    classification,
    reason,
    match: classification === 'matched',
    ...reviewOf(order),
    merchant_id: merchantOf(order.merchant_id, served),
  };
}

/** The review columns: open while flagged; else the last resolution, who and when; else none. */
function reviewOf(order: OrderRecord): Pick<ReportRow, 'review' | 'reviewed_by' | 'reviewed_at'> {
  if (order.needs_review) return { review: 'open', reviewed_by: null, reviewed_at: null };
  return {
    review: order.review_resolution,
    reviewed_by: order.review_resolution === null ? null : order.review_resolved_by,
    reviewed_at: order.review_resolution === null ? null : (order.review_resolved_at?.toISOString() ?? null),
  };
}

/** Totals per currency, from the orders' own amounts, in minor units (exact) and formatted. */
export function totalsOf(rows: readonly ReportRow[]): CurrencyTotals[] {
  const by = new Map<string, Omit<CurrencyTotals, `${string}_formatted`>>();
  for (const row of rows) {
    const t = by.get(row.currency) ?? {
      currency: row.currency,
      orders: 0,
      captured: 0,
      refunded: 0,
      disputed: 0,
      net: 0,
      in_flight: 0,
      mismatched: 0,
      resolved: 0,
    };
    t.orders += 1;
    t.captured += row.captured_amount ?? 0;
    t.refunded += row.refunded_amount;
    t.disputed += row.disputed_amount;
    t.net = t.captured - t.refunded - t.disputed;
    if (row.classification === 'in_flight') t.in_flight += 1;
    if (row.classification === 'mismatched') t.mismatched += 1;
    if (row.classification === 'resolved') t.resolved += 1;
    by.set(row.currency, t);
  }
  return [...by.values()]
    .sort((a, b) => a.currency.localeCompare(b.currency))
    .map((t) => ({
      ...t,
      captured_formatted: format(t.captured, t.currency) ?? '',
      refunded_formatted: format(t.refunded, t.currency) ?? '',
      disputed_formatted: format(t.disputed, t.currency) ?? '',
      net_formatted: format(t.net, t.currency) ?? '',
    }));
}

/** One merchant's totals in one currency: CurrencyTotals, and whose. */
export interface MerchantTotals extends CurrencyTotals {
  merchant_id: number | null;
}

/**
 * Totals per merchant and currency (platform mode, issue 45): `totalsOf` over each merchant's rows,
 * by merchant (null first), then currency. A kit of one merchant has one merchant's lines, the same
 * figures as `totalsOf`.
 */
export function totalsByMerchant(rows: readonly ReportRow[]): MerchantTotals[] {
  const by = new Map<number | null, ReportRow[]>();
  for (const row of rows) {
    const mine = by.get(row.merchant_id);
    if (mine) mine.push(row);
    else by.set(row.merchant_id, [row]);
  }
  return [...by.keys()]
    .sort((a, b) => (a ?? 0) - (b ?? 0))
    .flatMap((merchant) => totalsOf(by.get(merchant)!).map((t) => ({ merchant_id: merchant, ...t })));
}
