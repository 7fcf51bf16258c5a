import { type CurrencyCode, formatMinor, isCurrencyCode } from '../../shared/money.js';
import { joinPayment, type PaymentState } from '../orders/decide.js';
import { type MerchantFilter, merchantOf } from '../orders/order-merchant.js';
import { keptPayment } from '../orders/unmatched-money.js';
import type { UnmatchedMoneyRecord, UnmatchedResolution } from '../store/records.js';
import type { UnmatchedMoneyStore } from '../store/unmatched.js';

/**
 * Gateway money with no order (issue 19, part 1), as finance and operators read it: one row per
 * gateway transaction no attempt holds, and totals per currency. Pure: rows and totals from records.
 * The same row is what `GET /unmatched-money` lists and the report's second part holds.
 */
export interface UnmatchedMoneyRow {
  id: string;
  transaction_id: string;
  related_transaction_id: string | null;
  reference: string | null;
  transaction_type: string;
  status: string;
  currency: string;
  amount: number;
  amount_formatted: string | null;
  /** What a sale or capture took (null: an auth, a refund's or a void's record, or money not taken). */
  captured_amount: number | null;
  captured_amount_formatted: string | null;
  refunded_amount: number;
  refunded_amount_formatted: string | null;
  /** What a chargeback took while its payment is disputed; 0 otherwise (a reversal gives it back). */
  disputed_amount: number;
  disputed_amount_formatted: string | null;
  /** The order whose reference it carries (or, attached, the order it went to). */
  order_id: string | null;
  source: string;
  source_id: string;
  first_seen_at: string;
  last_seen_at: string;
  seen_count: number;
  resolution: UnmatchedResolution;
  resolved_note: string | null;
  resolved_by: string | null;
  resolved_at: string | null;
  /**
   * The merchant whose webhook endpoint its event came to (platform mode, issue 45); money kept
   * before platform mode is the first of GATEWAY_MERCHANTS'. Null: the kit does not know its key's
   * own merchant id.
   */
  merchant_id: number | null;
}

/** The CSV's second part: its columns, in order (docs/finance.md lists them). */
export const UNMATCHED_COLUMNS: readonly (keyof UnmatchedMoneyRow)[] = [
  'id',
  'transaction_id',
  'related_transaction_id',
  'reference',
  'transaction_type',
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
  'order_id',
  'source',
  'source_id',
  'first_seen_at',
  'last_seen_at',
  'seen_count',
  'resolution',
  'resolved_note',
  'resolved_by',
  'resolved_at',
  'merchant_id',
];

export interface UnmatchedTotals {
  currency: string;
  rows: number;
  open: number;
  attached: number;
  resolved: number;
  /** Money the gateway took on these payments (rows not attached: those are an order's now). */
  captured: number;
  captured_formatted: string;
  /** What it gave back of it: each payment's running refunded total (never a sum of refund events). */
  refunded: number;
  refunded_formatted: string;
  /** What chargebacks took back, of payments disputed now (a reversal gives it back). */
  disputed: number;
  disputed_formatted: string;
  /** Captured minus refunded minus disputed: what is left with the shop after chargebacks. */
  net: number;
  net_formatted: string;
}

const format = (minor: number, currency: string) =>
  isCurrencyCode(currency) ? formatMinor(minor, currency as CurrencyCode) : null;
const formatOrNull = (minor: number | null, currency: string) =>
  minor === null ? null : format(minor, currency);

/**
 * One row. `served`: the merchants the kit acts for (GATEWAY_MERCHANTS), whose first money that names
 * none belongs to; left out, the row shows the record's own `merchant_id`.
 */
export function unmatchedRow(m: UnmatchedMoneyRecord, served: readonly number[] = []): UnmatchedMoneyRow {
  return {
    id: m.id,
    transaction_id: m.transaction_id,
    related_transaction_id: m.related_transaction_id,
    reference: m.reference,
    transaction_type: m.transaction_type,
    status: m.status,
    currency: m.currency,
    amount: m.amount_minor,
    amount_formatted: format(m.amount_minor, m.currency),
    captured_amount: m.captured_minor,
    captured_amount_formatted: formatOrNull(m.captured_minor, m.currency),
    refunded_amount: m.refunded_minor,
    refunded_amount_formatted: format(m.refunded_minor, m.currency),
    disputed_amount: m.disputed_minor,
    disputed_amount_formatted: format(m.disputed_minor, m.currency),
    order_id: m.order_id,
    source: m.source,
    source_id: m.source_id,
    first_seen_at: m.first_seen_at.toISOString(),
    last_seen_at: m.last_seen_at.toISOString(),
    seen_count: m.seen_count,
    resolution: m.resolution,
    resolved_note: m.resolved_note,
    resolved_by: m.resolved_by,
    resolved_at: m.resolved_at?.toISOString() ?? null,
    merchant_id: merchantOf(m.merchant_id, served),
  };
}

/** The payment a row belongs to: a sale or an auth is its own; a capture, refund or void its parent's. */
const paymentKey = (m: UnmatchedMoneyRecord) =>
  JSON.stringify([m.currency, m.reference, m.related_transaction_id ?? m.transaction_id]);

/**
 * Totals per currency, in exact minor units. Rows are counted by resolution; money over the rows not
 * attached (attached money is an order's, counted in the orders' totals). A payment is its sale, or
 * its auth with its capture, and its refunds: the rows kept of it join into one payment by decide's
 * rule (joinPayment), as an order's attempt joins its records, so `captured` is what its sale or
 * capture took, `refunded` its running refunded total, and `disputed` what a chargeback took if the
 * latest record by the gateway's time says it is charged back; as an order's are (issue 44).
 */
export function unmatchedTotals(records: readonly UnmatchedMoneyRecord[]): UnmatchedTotals[] {
  type Counts = Pick<UnmatchedTotals, 'currency' | 'rows' | 'open' | 'attached' | 'resolved'>;
  const by = new Map<string, Counts>();
  const payments = new Map<string, { currency: string; states: PaymentState[] }>();
  for (const m of records) {
    const t = by.get(m.currency) ?? { currency: m.currency, rows: 0, open: 0, attached: 0, resolved: 0 };
    t.rows += 1;
    t[m.resolution] += 1;
    by.set(m.currency, t);
    if (m.resolution === 'attached') continue;
    const key = paymentKey(m);
    const payment = payments.get(key) ?? { currency: m.currency, states: [] };
    payment.states.push(keptPayment(m));
    payments.set(key, payment);
  }
  const money = new Map<string, { captured: number; refunded: number; disputed: number }>();
  for (const { currency, states } of payments.values()) {
    const p = joinPayment(states);
    const sums = money.get(currency) ?? { captured: 0, refunded: 0, disputed: 0 };
    sums.captured += p.capturedMinor ?? 0;
    sums.refunded += p.refundedMinor;
    sums.disputed += p.status === 'disputed' ? p.disputedMinor : 0;
    money.set(currency, sums);
  }
  return [...by.values()]
    .sort((a, b) => a.currency.localeCompare(b.currency))
    .map((t) => {
      const { captured, refunded, disputed } = money.get(t.currency) ?? {
        captured: 0,
        refunded: 0,
        disputed: 0,
      };
      const net = captured - refunded - disputed;
      return {
        ...t,
        captured,
        captured_formatted: format(captured, t.currency) ?? '',
        refunded,
        refunded_formatted: format(refunded, t.currency) ?? '',
        disputed,
        disputed_formatted: format(disputed, t.currency) ?? '',
        net,
        net_formatted: format(net, t.currency) ?? '',
      };
    });
}

/** One merchant's totals in one currency: UnmatchedTotals, and whose. */
export interface MerchantUnmatchedTotals extends UnmatchedTotals {
  merchant_id: number | null;
}

/**
 * Totals per merchant and currency (platform mode, issue 45): `unmatchedTotals` over each merchant's
 * money (`served`: money naming none is the first's), by merchant, then currency. A payment's rows
 * are one merchant's (its events came to one endpoint), so the lines add up to `unmatchedTotals`.
 */
export function unmatchedTotalsByMerchant(
  records: readonly UnmatchedMoneyRecord[],
  served: readonly number[] = [],
): MerchantUnmatchedTotals[] {
  const by = new Map<number | null, UnmatchedMoneyRecord[]>();
  for (const m of records) {
    const merchant = merchantOf(m.merchant_id, served);
    const mine = by.get(merchant);
    if (mine) mine.push(m);
    else by.set(merchant, [m]);
  }
  return [...by.keys()]
    .sort((a, b) => (a ?? 0) - (b ?? 0))
    .flatMap((merchant) => unmatchedTotals(by.get(merchant)!).map((t) => ({ merchant_id: merchant, ...t })));
}

/** The report's second part: the money first seen in the range, its totals, and per merchant. */
export interface UnmatchedSection {
  rows: UnmatchedMoneyRow[];
  totals: UnmatchedTotals[];
  totals_by_merchant: MerchantUnmatchedTotals[];
}

/**
 * The money first seen in the range: of every merchant, or of `merchants` (a report of one merchant,
 * or of a credential scoped to some). `served`: the merchants the kit acts for.
 */
export async function unmatchedSection(
  store: { unmatched: Pick<UnmatchedMoneyStore, 'firstSeen'> },
  range: { from: Date; to: Date },
  merchants: MerchantFilter | null = null,
  served: readonly number[] = [],
): Promise<UnmatchedSection> {
  const records = await store.unmatched.firstSeen(range.from, range.to, merchants);
  return {
    rows: records.map((m) => unmatchedRow(m, served)),
    totals: unmatchedTotals(records),
    totals_by_merchant: unmatchedTotalsByMerchant(records, served),
  };
}
