import { type CurrencyCode, formatMinor, isCurrencyCode } from '../src/shared/money.js';
import type { GatewayReader, GatewayRecord } from './gateway.js';
import { GatewayLedger } from './ledger.js';

/**
 * The money check (issue 19): the kit's reconciliation report, fetched as finance fetches it (its
 * HTTP API, the ops token), against sums over the gateway's own transaction records (its API),
 * currency by currency, to the minor unit. What the report says was captured, refunded and charged
 * back must be what the gateway did, whatever the faults did to the kit on the way. In platform mode
 * (issue 45) the same per merchant and currency too: the report's `totals_by_merchant` against the
 * gateway's records grouped by the merchant each record is (not the one the kit says), so money the
 * kit counts for the wrong merchant shows.
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
  /** The merchant of a row per merchant and currency; absent on a row per currency. */
  merchant?: number;
  currency: string;
  /** The report's orders in the currency. */
  orders: number;
  kit: Sums;
  gateway: Sums;
  equal: boolean;
}

export interface MoneyCheck {
  rows: MoneyRow[];
  /**
   * A row per merchant and currency (the report's `totals_by_merchant` against the gateway's records
   * by merchant); null: the report has no totals per merchant.
   */
  merchantRows: MoneyRow[] | null;
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

/** A line of `totals_by_merchant`: one merchant's totals in one currency. */
interface KitMerchantTotals extends KitTotals {
  merchant_id: number;
}

/** A report's row, as much of it as the run reads: which order, and the order's own money. */
export interface KitReportRow {
  order_id: string;
  /** The merchant whose order it is (platform mode); absent on a kit without merchants. */
  merchant_id?: number | null;
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
  /** Present once the report is told per merchant (issue 45). */
  totals_by_merchant?: KitMerchantTotals[];
  rows: KitReportRow[];
}

/** The key of a merchant's currency in the sums per merchant. */
export const merchantCurrency = (merchant: number, currency: string) => `${merchant} ${currency}`;

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
 * What the gateway's records say, per currency, and per merchant and currency (`byMerchant`, keyed by
 * `merchantCurrency`: the merchant the record is): every sale or auth (a session's payment is a sale)
 * that belongs to an order of the report, by its reference or by the transaction id the order holds.
 * A payment of a superseded attempt counts too: it is money the gateway took for that order (one
 * with money is a double charge, and is named in `notes`). Failed, cancelled (lapsed), voided and
 * pending payments hold nothing.
 */
export function gatewaySums(
  records: readonly GatewayRecord[],
  orders: readonly Pick<KitReportRow, 'order_id' | 'reference' | 'gateway_transaction_id'>[],
): { sums: Map<string, Sums>; byMerchant: Map<string, Sums>; notes: string[] } {
  const references = new Map(orders.map((o) => [o.reference, o]));
  const held = new Set(orders.map((o) => o.gateway_transaction_id).filter((id) => id !== null));
  const captures = new Map<number, GatewayRecord>();
  for (const r of records) if (r.type === 'capture' && r.relatedId !== null) captures.set(r.relatedId, r);
  const sums = new Map<string, Sums>();
  const byMerchant = new Map<string, Sums>();
  const notes: string[] = [];
  const add = (
    into: Map<string, Sums>,
    key: string,
    captured: number,
    refunded: number,
    disputed: number,
  ) => {
    const s = into.get(key) ?? { captured: 0, refunded: 0, disputed: 0, net: 0 };
    s.captured += captured;
    s.refunded += refunded;
    s.disputed! += disputed;
    s.net = s.captured - s.refunded - s.disputed!;
    into.set(key, s);
  };
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
    add(sums, p.currency, captured, p.refunded, disputed);
    add(byMerchant, merchantCurrency(p.merchantId, p.currency), captured, p.refunded, disputed);
    if (order && order.gateway_transaction_id !== null && order.gateway_transaction_id !== String(p.id))
      notes.push(
        `order ${order.order_id} (${p.reference}): payment ${p.id} ${p.status} ${captured} ${p.currency} ` +
          `is not the one its current attempt holds (${order.gateway_transaction_id})`,
      );
  }
  return { sums, byMerchant, notes };
}

/** The report of every order created from `from` on, against the gateway's records. */
export async function checkMoney(o: {
  api: { url: string; opsToken: string };
  reader: GatewayReader;
  from: Date;
}): Promise<MoneyCheck> {
  const report = await fetchReport(o.api, o.from);
  const records = await new GatewayLedger(o.reader).all();
  const { sums, byMerchant, notes } = gatewaySums(records, report.rows);
  const withDisputes = report.totals.length > 0 && report.totals.every((t) => typeof t.disputed === 'number');
  const compared = withDisputes ? ['captured', 'refunded', 'disputed', 'net'] : ['captured', 'refunded'];
  const rows = moneyRows(
    new Map(report.totals.map((t) => [t.currency, t])),
    sums,
    compared,
    withDisputes,
  ).map(({ key, ...row }) => ({ ...row, currency: key }));
  const perMerchant = report.totals_by_merchant;
  const merchantRows =
    perMerchant === undefined
      ? null
      : moneyRows(
          new Map(perMerchant.map((t) => [merchantCurrency(t.merchant_id, t.currency), t])),
          byMerchant,
          compared,
          withDisputes,
        ).map(({ key, ...row }) => {
          const [merchant, currency] = key.split(' ');
          return { ...row, merchant: Number(merchant), currency: currency! };
        });
  const lapsed = records.filter((r) => r.type === 'auth' && r.status === 'cancelled').length;
  return { rows, merchantRows, compared, reportOrders: report.rows.length, notes, lapsed };
}

/** The kit's totals beside the gateway's sums, a row per key either side has, in the keys' order. */
function moneyRows(
  kit: ReadonlyMap<string, KitTotals>,
  gateway: ReadonlyMap<string, Sums>,
  compared: readonly string[],
  withDisputes: boolean,
): (Omit<MoneyRow, 'currency' | 'merchant'> & { key: string })[] {
  const keys = [...new Set([...kit.keys(), ...gateway.keys()])].sort();
  return keys.map((key) => {
    const t = kit.get(key);
    const mine: Sums = {
      captured: t?.captured ?? 0,
      refunded: t?.refunded ?? 0,
      disputed: t === undefined ? (withDisputes ? 0 : null) : (t.disputed ?? null),
      net: t?.net ?? 0,
    };
    const theirs = gateway.get(key) ?? { captured: 0, refunded: 0, disputed: 0, net: 0 };
    const equal = compared.every((k) => mine[k as keyof Sums] === theirs[k as keyof Sums]);
    return { key, orders: t?.orders ?? 0, kit: mine, gateway: theirs, equal };
  });
}

const amount = (minor: number | null, currency: string) =>
  minor === null
    ? 'not in the report'
    : isCurrencyCode(currency)
      ? formatMinor(minor, currency as CurrencyCode)
      : `${minor} (minor units)`;

/**
 * A markdown table, a row per currency, then (platform mode) a row per merchant and currency: the
 * kit's figure beside the gateway's, for each measure.
 */
export function moneyTable(check: MoneyCheck): string {
  const pair = (r: MoneyRow, k: keyof Sums) => {
    const both = `${amount(r.kit[k], r.currency)} / ${amount(r.gateway[k], r.currency)}`;
    return check.compared.includes(k) ? both : `${both} (not compared)`;
  };
  const rows = [
    ...check.rows.map((r) => ({ ...r, who: 'all' })),
    ...(check.merchantRows ?? []).map((r) => ({ ...r, who: String(r.merchant) })),
  ];
  const lines = [
    '| merchant | currency | orders | captured (kit / gateway) | refunded (kit / gateway) | disputed (kit / gateway) | net (kit / gateway) | equal |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.who} | ${r.currency} | ${r.orders} | ${pair(r, 'captured')} | ${pair(r, 'refunded')} | ` +
        `${pair(r, 'disputed')} | ${pair(r, 'net')} | ${r.equal ? 'yes' : '**no**'} |`,
    ),
  ];
  return lines.join('\n');
}
