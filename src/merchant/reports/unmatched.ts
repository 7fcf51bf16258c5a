import { type CurrencyCode, formatMinor, isCurrencyCode } from '../../shared/money.js';
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
  refunded_amount: number;
  refunded_amount_formatted: string | null;
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
  'refunded_amount',
  'refunded_amount_formatted',
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
];

export interface UnmatchedTotals {
  currency: string;
  rows: number;
  open: number;
  attached: number;
  resolved: number;
  /** Money the gateway took on these transactions (rows not attached: those are an order's now). */
  captured: number;
  captured_formatted: string;
  /** What it gave back of it: each payment's running refunded total (never a sum of refund events). */
  refunded: number;
  refunded_formatted: string;
  /** Captured minus refunded. */
  net: number;
  net_formatted: string;
}

const format = (minor: number, currency: string) =>
  isCurrencyCode(currency) ? formatMinor(minor, currency as CurrencyCode) : null;

export function unmatchedRow(m: UnmatchedMoneyRecord): UnmatchedMoneyRow {
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
    refunded_amount: m.refunded_minor,
    refunded_amount_formatted: format(m.refunded_minor, m.currency),
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
  };
}

/** Statuses of a sale's or capture's record that say the money was taken (and not given back by a void). */
const TAKEN = new Set(['captured', 'refunded', 'chargeback']);

/**
 * Totals per currency, in exact minor units. Rows are counted by resolution; money over the rows not
 * attached (attached money is an order's, counted in the orders' totals). A payment is its sale, or
 * its auth with the captures made on it: `captured` adds up the sales and captures the gateway says
 * took money; `refunded` takes, per payment, the largest running refunded total any of its rows
 * carries (a refund's record carries its payment's), as an order's does.
 */
export function unmatchedTotals(rows: readonly UnmatchedMoneyRow[]): UnmatchedTotals[] {
  type Sums = Pick<UnmatchedTotals, 'currency' | 'rows' | 'open' | 'attached' | 'resolved' | 'captured'>;
  const by = new Map<string, Sums>();
  const refundedByPayment = new Map<string, { currency: string; refunded: number }>();
  for (const row of rows) {
    const t = by.get(row.currency) ?? {
      currency: row.currency,
      rows: 0,
      open: 0,
      attached: 0,
      resolved: 0,
      captured: 0,
    };
    t.rows += 1;
    t[row.resolution] += 1;
    by.set(row.currency, t);
    if (row.resolution === 'attached') continue;
    const takes = row.transaction_type === 'sale' || row.transaction_type === 'capture';
    if (takes && TAKEN.has(row.status)) t.captured += row.amount;
    const payment = `${row.currency}:${row.related_transaction_id ?? row.transaction_id}`;
    const known = refundedByPayment.get(payment);
    if (!known || row.refunded_amount > known.refunded)
      refundedByPayment.set(payment, { currency: row.currency, refunded: row.refunded_amount });
  }
  const refunded = new Map<string, number>();
  for (const { currency, refunded: r } of refundedByPayment.values())
    refunded.set(currency, (refunded.get(currency) ?? 0) + r);
  return [...by.values()]
    .sort((a, b) => a.currency.localeCompare(b.currency))
    .map((t) => {
      const r = refunded.get(t.currency) ?? 0;
      return {
        ...t,
        captured_formatted: format(t.captured, t.currency) ?? '',
        refunded: r,
        refunded_formatted: format(r, t.currency) ?? '',
        net: t.captured - r,
        net_formatted: format(t.captured - r, t.currency) ?? '',
      };
    });
}

/** The report's second part: the money first seen in the range, and its totals. */
export interface UnmatchedSection {
  rows: UnmatchedMoneyRow[];
  totals: UnmatchedTotals[];
}

export async function unmatchedSection(
  store: { unmatched: Pick<UnmatchedMoneyStore, 'firstSeen'> },
  range: { from: Date; to: Date },
): Promise<UnmatchedSection> {
  const rows = (await store.unmatched.firstSeen(range.from, range.to)).map(unmatchedRow);
  return { rows, totals: unmatchedTotals(rows) };
}
