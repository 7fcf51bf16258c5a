import { type ErasureVerdict, erasureFailures, erasureRows } from './erasure-verdict.js';
import { type RedisLossTime, redisLossCell, redisLossFailures } from './redis-loss.js';

/**
 * The run's result as the issue asks for it: one markdown table (it goes into docs/development.md as
 * printed), and the verdict: what makes the run fail.
 */

export interface Result {
  orders: number;
  /** Orders compared with the gateway's record of their payment (the rest have none there). */
  checked: number;
  gatewayEvents: number;
  /** Delivery attempts the gateway made (those the outage refused included). */
  deliveries: number;
  duplicates: number;
  stored: number;
  applied: number;
  changed: number;
  recovered: number;
  appliedTwice: number;
  lost: number;
  /** Null: never checked. */
  untrue: number | null;
  /** Null: did not converge within the bound. */
  convergeSeconds: number | null;
  /** After each Redis fault, how long the events it held unapplied took to be applied (issue 44). */
  redisLoss?: RedisLossTime[];
  /**
   * From the deadline of the last auth left open, when it lapsed after the kit had converged from the
   * faults (seconds null: not within the bound); null when every lapse came before.
   */
  lapseConvergence: { seconds: number | null } | null;
  /** Kit processes that died without being killed by the run. */
  crashed: number;
  /** Gateway events of chargebacks, and of chargebacks reversed. */
  chargebacks: number;
  reversals: number;
  /** Auths that lapsed at the gateway; null: not read. */
  lapsed: number | null;
  /** The report's totals against the gateway's records; null: the check could not run. */
  money: MoneyVerdict | null;
  /** Orders that ended (closed), by why; null: not read. */
  closed: { cancelled: number; expired: number } | null;
  /** The customer erased in the middle of the traffic (chaos/erasure.ts); null: it did not run. */
  erasure: ErasureVerdict | null;
  /**
   * Platform mode (issue 45): a line per merchant, and what holds the kit to each merchant; null: a
   * kit of one merchant.
   */
  platform?: PlatformVerdict | null;
}

/** The storm of a kit acting for several merchants, merchant by merchant. */
export interface PlatformVerdict {
  lines: MerchantLine[];
  /** Orders the kit keeps as another merchant's than the run asked for (must be 0). */
  wrongMerchant: number;
  /** Gateway events the inbox keeps as another merchant's than the gateway's (must be 0). */
  misfiled: number;
  /** Copies of a merchant's events posted to another merchant's URL, signed with its secret. */
  forged: { posted: number; answers: Record<string, number> };
  /** The merchants whose webhook secret the storm rotated, in order. */
  rotated: number[];
}

/** One merchant's part of the storm. */
export interface MerchantLine {
  merchant: number;
  /** Events the gateway recorded for it, and those the kit never stored or applied (must be 0). */
  events: number;
  lost: number;
  /** Orders the run asked the kit to make for it. */
  asked: number;
  /** The kit's orders that name it. */
  orders: number;
  /** Of those, compared with the gateway's record of their payment, and those that differ. */
  checked: number;
  untrue: number;
  /** Its lines of `totals_by_merchant` (one per currency) and those that differ; null: not checked. */
  currencies: number | null;
  differing: number | null;
}

/** The money check in figures (chaos/money.ts). */
export interface MoneyVerdict {
  currencies: number;
  /** Currencies where a compared total differs. */
  differing: number;
  /** Lines per merchant and currency, and those that differ; null: the report has none. */
  merchantLines?: { lines: number; differing: number } | null;
  compared: string[];
  /** Orders the report covers (it must cover every order). */
  reportOrders: number;
}

const n = (value: number) => value.toLocaleString('en-US');

export function table(r: Result): string {
  const rows: [string, string][] = [
    ['orders', `${n(r.orders)} (${n(r.checked)} with a payment at the gateway)`],
    ['events the gateway recorded', n(r.gatewayEvents)],
    [
      'events sent to the receiver',
      `${n(r.deliveries + r.duplicates)} (${n(r.deliveries)} gateway deliveries, ${n(r.duplicates)} shuffled duplicates)`,
    ],
    ['stored (inbox)', `${n(r.stored)} (${n(r.recovered)} fetched by recovery)`],
    [
      'applied',
      `${n(r.applied)} (${n(r.changed)} changed an order, ${n(r.applied - r.changed)} were news it had already)`,
    ],
    ['applied twice (must be 0)', n(r.appliedTwice)],
    ['lost (must be 0)', n(r.lost)],
    ["orders not equal to the gateway's truth (must be 0)", r.untrue === null ? 'not checked' : n(r.untrue)],
    [
      'chargebacks, reversals and lapses at the gateway',
      `${n(r.chargebacks)} charged back, ${n(r.reversals)} reversed, ` +
        `${r.lapsed === null ? 'unknown' : n(r.lapsed)} auths lapsed`,
    ],
    [
      'orders that ended (closed)',
      r.closed === null
        ? 'not read'
        : `${n(r.closed.cancelled)} cancelled by the shop, ${n(r.closed.expired)} expired (ORDER_TTL)`,
    ],
    ...erasureRows(r.erasure),
    ["report totals equal to the gateway's records (must be every currency)", moneyCell(r)],
    ...platformRows(r),
    [
      'seconds to converge after the last fault',
      r.convergeSeconds === null ? 'did not converge' : r.convergeSeconds.toFixed(1),
    ],
    ["seconds to converge after the last auth's deadline", lapseCell(r)],
    [
      'seconds from each Redis fault to every event it held unapplied applied (at most 15)',
      redisLossCell(r.redisLoss ?? []),
    ],
  ];
  const lines = ['| measure | value |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)];
  return lines.join('\n');
}

/** A line per merchant, and the checks of a kit acting for several. */
function platformRows(r: Result): [string, string][] {
  const p = r.platform;
  if (!p) return [];
  const perMerchant = p.lines.map((l): [string, string] => [
    `merchant ${l.merchant}: orders, equal to the gateway's truth; its events, lost; report totals equal to its records`,
    `${n(l.orders)} orders (${n(l.asked)} asked for it), ${n(l.checked - l.untrue)} of ${n(l.checked)} with a ` +
      `payment at the gateway equal to it; ${n(l.events)} events, ${n(l.lost)} lost; ` +
      (l.currencies === null
        ? 'report totals per merchant not checked'
        : `report totals equal in ${n(l.currencies - l.differing!)} of ${n(l.currencies)} currencies`),
  ]);
  const m = r.money?.merchantLines;
  const forged = p.forged;
  return [
    ...perMerchant,
    [
      "report totals per merchant equal to the gateway's records by merchant (must be every line)",
      m === undefined || m === null
        ? 'not checked'
        : `${n(m.lines - m.differing)} of ${n(m.lines)} merchant and currency lines`,
    ],
    ['orders the kit keeps as another merchant than asked (must be 0)', n(p.wrongMerchant)],
    ["gateway events kept as another merchant's (must be 0)", n(p.misfiled)],
    [
      "forged copies: a merchant's event at another merchant's URL, signed with that one's secret",
      `${n(forged.posted)} posted, the receiver's answers ${JSON.stringify(forged.answers)}; ` +
        'none may change an order (the orders above equal the truth)',
    ],
    [
      'webhook secret rotated',
      p.rotated.length === 0 ? 'none' : `${p.rotated.map((m) => `merchant ${m}'s`).join(', ')} only`,
    ],
  ];
}

function lapseCell(r: Result): string {
  if (r.lapseConvergence === null) return 'every lapse came before';
  const { seconds } = r.lapseConvergence;
  return seconds === null ? 'did not converge' : seconds.toFixed(1);
}

function moneyCell(r: Result): string {
  if (r.money === null) return 'not checked';
  const m = r.money;
  return (
    `${n(m.currencies - m.differing)} of ${n(m.currencies)} currencies (${m.compared.join(', ')}; ` +
    `${n(m.reportOrders)} of ${n(r.orders)} orders in the report)`
  );
}

/** Why a kit acting for several merchants fails the storm, merchant by merchant. */
function platformFailures(r: Result): string[] {
  const p = r.platform;
  if (!p) return [];
  const out: string[] = [];
  for (const l of p.lines) {
    if (l.orders === 0 || l.checked === 0) out.push(`merchant ${l.merchant} had no order with a payment`);
    if (l.untrue > 0) out.push(`${l.untrue} orders of merchant ${l.merchant} not equal to the truth`);
    if (l.differing !== null && l.differing > 0)
      out.push(`${l.differing} currencies of merchant ${l.merchant} where the report's totals differ`);
  }
  const m = r.money?.merchantLines;
  if (r.money && !m) out.push('the report has no totals per merchant');
  if (m && m.differing > 0)
    out.push(
      `${m.differing} merchant and currency lines where the report's totals differ from the gateway's`,
    );
  if (p.wrongMerchant > 0) out.push(`${p.wrongMerchant} orders kept as another merchant's than asked`);
  if (p.misfiled > 0) out.push(`${p.misfiled} gateway events kept as another merchant's`);
  return out;
}

/** Why the run fails; empty when it passes. */
export function failures(r: Result): string[] {
  const out: string[] = [];
  if (r.appliedTwice > 0) out.push(`${r.appliedTwice} applied twice`);
  if (r.lost > 0) out.push(`${r.lost} events lost`);
  if (r.untrue === null || r.untrue > 0) out.push(`${r.untrue ?? 'unchecked'} orders not equal to the truth`);
  if (r.convergeSeconds === null) out.push('no convergence within the bound');
  if (r.lapseConvergence && r.lapseConvergence.seconds === null)
    out.push('no convergence within the bound after the last lapse');
  if (r.crashed > 0) out.push(`${r.crashed} kit processes died on their own`);
  out.push(...redisLossFailures(r.redisLoss ?? []));
  if (r.money === null) out.push("the report's totals not checked against the gateway");
  else {
    if (r.money.differing > 0)
      out.push(`${r.money.differing} currencies where the report's totals differ from the gateway's records`);
    if (r.money.reportOrders !== r.orders)
      out.push(`the report covers ${r.money.reportOrders} of ${r.orders} orders`);
  }
  out.push(...platformFailures(r));
  out.push(...erasureFailures(r.erasure));
  return out;
}
