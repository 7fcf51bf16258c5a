import { type CurrencyCode, formatMinor, isCurrencyCode } from '../src/shared/money.js';
import type { GatewayReader, GatewayRecord } from './gateway.js';
import { GatewayLedger } from './ledger.js';

/**
 * The money check (issue 19): the kit's reconciliation report, fetched as finance fetches it (its
 * HTTP API, the ops token), against sums over the gateway's own transaction records (its API),
 * currency by currency, to the minor unit. What the report says was captured, refunded and charged
 * back must be what the gateway did, whatever the faults did to the kit on the way.
 */

const REPORT_MS = 60_000;
/** Gateway statuses after money moved: the payment holds what was captured (sandbox.md sections 6, 11). */
const MONEY_MOVED = new Set(['captured', 'refunded', 'chargeback']);

/** A currency's money, in minor units. */
export interface Sums {
  captured: number;
  refunded: number;
  /** What chargebacks took; null: the report does not say (a kit without disputes). */
  disputed: number | null;
  /** Captured minus refunded minus disputed (the kit's own figure). */
  net: number;
}

export interface MoneyRow {
  currency: string;
  /** The report's orders in the currency. */
  orders: number;
  kit: Sums;
  gateway: Sums;
  equal: boolean;
}

export interface MoneyCheck {
  rows: MoneyRow[];
  /** The fields compared: `captured` and `refunded`, and `disputed` and `net` when the report has `disputed`. */
  compared: string[];
  /** Orders the report covers. */
  reportOrders: number;
  /** Gateway payments with money that are not their order's current payment, one line each. */
  notes: string[];
  /** The gateway's auths that lapsed (an approved auth is cancelled only by lapsing). */
  lapsed: number;
}

/** A report's totals row as the kit answers it (merchant.md, GET /reports/reconciliation). */
interface KitTotals {
  currency: string;
  orders: number;
  captured: number;
  refunded: number;
  net: number;
  /** Present once the kit keeps disputes (issue 19, part 2). */
  disputed?: number;
}

/** A report's row, as much of it as the run reads: which order, and the order's own money. */
export interface KitReportRow {
  order_id: string;
  reference: string;
  gateway_transaction_id: string | null;
  status: string;
  currency: string;
  amount: number;
  captured_amount: number | null;
  refunded_amount: number;
  disputed_amount: number;
}

export interface KitReport {
  totals: KitTotals[];
  rows: KitReportRow[];
}

/** GET /reports/reconciliation as JSON, every order created from `from` on (and up to a day ahead). */
export async function fetchReport(api: { url: string; opsToken: string }, from: Date): Promise<KitReport> {
  const to = new Date(Date.now() + 24 * 3_600_000);
  const query = new URLSearchParams({ from: from.toISOString(), to: to.toISOString(), format: 'json' });
  const res = await fetch(`${api.url}/reports/reconciliation?${query}`, {
    headers: { authorization: `Bearer ${api.opsToken}` },
    signal: AbortSignal.timeout(REPORT_MS),
  });
  const body = await res.json();
  if (res.status !== 200)
    throw new Error(`GET /reports/reconciliation: ${res.status} ${body.code} ${body.message}`);
  return body.data as KitReport;
}

/**
 * What the gateway's records say, per currency: every sale or auth (a session's payment is a sale)
 * that belongs to an order of the report, by its reference or by the transaction id the order holds.
 * A payment of a superseded attempt counts too: it is money the gateway took for that order (one
 * with money is a double charge, and is named in `notes`). Failed, cancelled (lapsed), voided and
 * pending payments hold nothing.
 */
export function gatewaySums(
  records: readonly GatewayRecord[],
  orders: readonly Pick<KitReportRow, 'order_id' | 'reference' | 'gateway_transaction_id'>[],
): { sums: Map<string, Sums>; notes: string[] } {
  const references = new Map(orders.map((o) => [o.reference, o]));
  const held = new Set(orders.map((o) => o.gateway_transaction_id).filter((id) => id !== null));
  const captures = new Map<number, GatewayRecord>();
  for (const r of records) if (r.type === 'capture' && r.relatedId !== null) captures.set(r.relatedId, r);
  const sums = new Map<string, Sums>();
  const notes: string[] = [];
  for (const p of records) {
    if (p.relatedId !== null || (p.type !== 'sale' && p.type !== 'auth')) continue;
    const order = references.get(p.reference);
    if (!order && !held.has(String(p.id))) continue;
    if (!MONEY_MOVED.has(p.status)) continue;
    const capture = captures.get(p.id);
    if (p.type === 'auth' && !capture) notes.push(`auth ${p.id} is ${p.status} with no capture record`);
    const captured = p.type === 'auth' ? (capture?.amount ?? 0) : p.amount;
    // sandbox.md section 11: without an amount, a chargeback takes what was captured and not refunded.
    const disputed = p.status === 'chargeback' ? (p.chargeback ?? captured - p.refunded) : 0;
    const s = sums.get(p.currency) ?? { captured: 0, refunded: 0, disputed: 0, net: 0 };
    s.captured += captured;
    s.refunded += p.refunded;
    s.disputed! += disputed;
    s.net = s.captured - s.refunded - s.disputed!;
    sums.set(p.currency, s);
    if (order && order.gateway_transaction_id !== null && order.gateway_transaction_id !== String(p.id))
      notes.push(
        `order ${order.order_id} (${p.reference}): payment ${p.id} ${p.status} ${captured} ${p.currency} ` +
          `is not the one its current attempt holds (${order.gateway_transaction_id})`,
      );
  }
  return { sums, notes };
}

/** The report of every order created from `from` on, against the gateway's records. */
export async function checkMoney(o: {
  api: { url: string; opsToken: string };
  reader: GatewayReader;
  from: Date;
}): Promise<MoneyCheck> {
  const report = await fetchReport(o.api, o.from);
  const records = await new GatewayLedger(o.reader).all();
  const { sums, notes } = gatewaySums(records, report.rows);
  const withDisputes = report.totals.length > 0 && report.totals.every((t) => typeof t.disputed === 'number');
  const compared = withDisputes ? ['captured', 'refunded', 'disputed', 'net'] : ['captured', 'refunded'];
  const kit = new Map(report.totals.map((t) => [t.currency, t]));
  const currencies = [...new Set([...kit.keys(), ...sums.keys()])].sort();
  const rows = currencies.map((currency): MoneyRow => {
    const t = kit.get(currency);
    const mine: Sums = {
      captured: t?.captured ?? 0,
      refunded: t?.refunded ?? 0,
      disputed: t === undefined ? (withDisputes ? 0 : null) : (t.disputed ?? null),
      net: t?.net ?? 0,
    };
    const theirs = sums.get(currency) ?? { captured: 0, refunded: 0, disputed: 0, net: 0 };
    const equal = compared.every((k) => mine[k as keyof Sums] === theirs[k as keyof Sums]);
    return { currency, orders: t?.orders ?? 0, kit: mine, gateway: theirs, equal };
  });
  const lapsed = records.filter((r) => r.type === 'auth' && r.status === 'cancelled').length;
  return { rows, compared, reportOrders: report.rows.length, notes, lapsed };
}

const amount = (minor: number | null, currency: string) =>
  minor === null
    ? 'not in the report'
    : isCurrencyCode(currency)
      ? formatMinor(minor, currency as CurrencyCode)
      : `${minor} (minor units)`;

/** A markdown table, a row per currency: the kit's figure beside the gateway's, for each measure. */
export function moneyTable(check: MoneyCheck): string {
  const pair = (r: MoneyRow, k: keyof Sums) => {
    const both = `${amount(r.kit[k], r.currency)} / ${amount(r.gateway[k], r.currency)}`;
    return check.compared.includes(k) ? both : `${both} (not compared)`;
  };
  const lines = [
    '| currency | orders | captured (kit / gateway) | refunded (kit / gateway) | disputed (kit / gateway) | net (kit / gateway) | equal |',
    '|---|---|---|---|---|---|---|',
    ...check.rows.map(
      (r) =>
        `| ${r.currency} | ${r.orders} | ${pair(r, 'captured')} | ${pair(r, 'refunded')} | ` +
        `${pair(r, 'disputed')} | ${pair(r, 'net')} | ${r.equal ? 'yes' : '**no**'} |`,
    ),
  ];
  return lines.join('\n');
}
