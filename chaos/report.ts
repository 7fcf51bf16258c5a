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
}

/** The money check in figures (chaos/money.ts). */
export interface MoneyVerdict {
  currencies: number;
  /** Currencies where a compared total differs. */
  differing: number;
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
  out.push(...erasureFailures(r.erasure));
  return out;
}
