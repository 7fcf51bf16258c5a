import type { StormCustomers } from './erasure.js';
import { type ErasureRun, personalValues } from './erasure.js';
import type { GatewayReader } from './gateway.js';
import { untrueOrders } from './measure.js';
import type { KitReportRow } from './money.js';
import type { KitTables } from './tables.js';

/**
 * The verdict on the storm's erasure (chaos/erasure.ts), read from the kit's own tables and the
 * gateway's records once the storm has converged: nothing of the erased customer anywhere in the
 * kit's database (a dump of every table, searched for each of their values), while everything of the
 * customers who stay is still found there (so the search does see what is there); every order of
 * theirs erased, and equal to the gateway's truth; no report row moved by the erasure; no card of
 * theirs still active at the gateway.
 */

/** The report and every order's version at one moment (around the erasure). */
export interface Snapshot {
  versions: Map<string, number>;
  rows: KitReportRow[];
}

/** What the erasure did to the report: rows compared before and after, as far as the traffic left them still. */
export interface ReportBeside {
  /** Orders in both reports that nothing but the erasure changed in between: their rows compared. */
  compared: number;
  /** Of those, the erased customer's. */
  erased: number;
  /** Orders the traffic changed in between, or made: left out. */
  moved: number;
  /** Rows compared whose money differs, or gone from the report after: must be none. */
  changed: string[];
}

/** The order's own money in a report row: what its totals add up. */
const MONEY = [
  'status',
  'currency',
  'amount',
  'captured_amount',
  'refunded_amount',
  'disputed_amount',
] as const;

/**
 * The rows of `before` and `after` side by side. An order's version counts the changes its one
 * writer made: the erasure makes one to each order it erases, and none to the others; an order with
 * more between the two reads (or made in between) was moved by the traffic too, and is left out.
 * Every other row must be the same, money and all.
 */
export function reportBeside(before: Snapshot, after: Snapshot, erased: ReadonlySet<string>): ReportBeside {
  const afterRows = new Map(after.rows.map((r) => [r.order_id, r]));
  const out: ReportBeside = { compared: 0, erased: 0, moved: 0, changed: [] };
  for (const row of before.rows) {
    const was = before.versions.get(row.order_id);
    const is = after.versions.get(row.order_id);
    const byErasure = erased.has(row.order_id) ? 1 : 0;
    if (was === undefined || is === undefined || is - was > byErasure) {
      out.moved += 1;
      continue;
    }
    out.compared += 1;
    if (erased.has(row.order_id)) out.erased += 1;
    const now = afterRows.get(row.order_id);
    const differs = now ? MONEY.filter((k) => row[k] !== now[k]) : null;
    if (differs === null) out.changed.push(`order ${row.order_id}: in the report before, not after`);
    else if (differs.length > 0)
      out.changed.push(
        `order ${row.order_id}: ${differs.map((k) => `${k} ${row[k]} -> ${now![k]}`).join(', ')}`,
      );
  }
  out.moved += after.rows.filter((r) => !before.versions.has(r.order_id)).length;
  return out;
}

/** Those of `values` that `text` holds, in any case. */
export function foundIn(text: string, values: readonly string[]): string[] {
  const lower = text.toLowerCase();
  return values.filter((v) => lower.includes(v.toLowerCase()));
}

/** Where a dump (`table: values`, a line per row) holds `value`: the tables, and the rows in each. */
export function whereIn(dump: string, value: string): string {
  const counts = new Map<string, number>();
  const lower = value.toLowerCase();
  for (const line of dump.split('\n'))
    if (line.toLowerCase().includes(lower)) {
      const table = line.slice(0, line.indexOf(':'));
      counts.set(table, (counts.get(table) ?? 0) + 1);
    }
  return [...counts].map(([table, rows]) => `${table} (${rows} rows)`).join(', ');
}

export interface ErasureVerdict {
  run: ErasureRun;
  /** The erased customer's orders the storm made (all before the erasure). */
  orders: number;
  /** Of those, whose `customer` is the erasure's marker now. */
  marked: number;
  /** Their personal values looked for, and those found in the dump. */
  values: number;
  found: string[];
  /** Where each value found is: `value: table (rows), ...`. */
  where: string[];
  dump: { tables: number; rows: number };
  /** The customers who stay (those with an order): their values, and how many of them the dump holds. */
  kept: { customers: number; values: number; found: number };
  /** The erased orders with a payment at the gateway compared with it, and those that differ. */
  truth: { checked: number; untrue: string[] };
  /** Null: a report around the erasure could not be read. */
  beside: ReportBeside | null;
  /** Cards saved for them before the erasure, and those the gateway holds active after; null: not read. */
  cards: { saved: number; active: number | null };
}

/** The verdict, once the storm has converged. */
export async function checkErasure(o: {
  run: ErasureRun;
  customers: StormCustomers;
  tables: KitTables;
  reader: GatewayReader;
  captures: ReadonlyMap<number, number>;
}): Promise<ErasureVerdict> {
  const { customers, run } = o;
  const ids = customers.erasedOrders;
  const dump = await o.tables.dump();
  const values = personalValues(customers.erased);
  const found = foundIn(dump.text, values);
  const kept = [...customers.keptWithOrders].flatMap(personalValues);
  const marked = [...(await o.tables.customers([...ids])).values()].filter(
    (c) =>
      c !== null && c.erased === true && Object.keys(c).every((k) => k === 'erased' || k === 'erased_at'),
  ).length;
  const active = await o.reader
    .activeInstruments(customers.erased.merchant_customer_id!, customers.merchant)
    .then((tokens) => tokens.length)
    .catch(() => null);
  return {
    run,
    orders: ids.size,
    marked,
    values: values.length,
    found,
    where: found.map((value) => `${value}: ${whereIn(dump.text, value)}`),
    dump: { tables: dump.tables, rows: dump.rows },
    kept: {
      customers: customers.keptWithOrders.size,
      values: kept.length,
      found: foundIn(dump.text, kept).length,
    },
    truth: await untrueOrders(o.tables, o.reader, o.captures, ids),
    beside: run.before && run.after && reportBeside(run.before, run.after, ids),
    cards: { saved: customers.savedCards, active },
  };
}

const n = (value: number) => value.toLocaleString('en-US');

/** The verdict's lines of the storm's table. */
export function erasureRows(v: ErasureVerdict | null): [string, string][] {
  if (v === null) return [['the erasure in the middle of the traffic', 'not run']];
  const { run } = v;
  const challenge =
    run.challenge === null ? 'none at a 3DS challenge' : `one at its 3DS challenge, ${run.challenge}`;
  const beside = v.beside;
  return [
    [
      'the erasure in the middle of the traffic (`POST /customers/{id}/erase`, admin)',
      run.answer === null
        ? `**not done** in ${n(run.tries)} requests`
        : `${n(v.orders)} orders of one customer; at the erasure, ${n(run.inFlight.stories)} of their ` +
          `stories under way, ${n(run.inFlight.auths)} auths open, ${challenge}; ` +
          `answered in ${n(run.tries)} request(s), ${run.seconds.toFixed(1)} s`,
    ],
    [
      "the erased customer's personal values in the kit's database (must be 0)",
      `${n(v.found.length)} of ${n(v.values)} found in a dump of ${n(v.dump.tables)} tables, ${n(v.dump.rows)} rows ` +
        `(the ${n(v.kept.customers)} customers who stay: ${n(v.kept.found)} of ${n(v.kept.values)} values found)`,
    ],
    [
      "the erased customer's orders erased and equal to the gateway's truth (must be all)",
      `${n(v.marked)} of ${n(v.orders)} erased; ${n(v.truth.checked - v.truth.untrue.length)} of ` +
        `${n(v.truth.checked)} with a payment at the gateway equal to it`,
    ],
    [
      'report rows the erasure changed (must be 0)',
      beside === null
        ? 'not read'
        : `${n(beside.changed.length)} of ${n(beside.compared)} compared before and after it ` +
          `(${n(beside.erased)} of them erased; ${n(beside.moved)} the traffic moved meanwhile, left out)`,
    ],
    [
      "the erased customer's saved cards active at the gateway (must be 0)",
      `${v.cards.active === null ? 'not read' : n(v.cards.active)} (${n(v.cards.saved)} saved before the erasure)`,
    ],
  ];
}

/** Why the erasure's part of the storm fails; empty when it passes. */
export function erasureFailures(v: ErasureVerdict | null): string[] {
  if (v === null) return ['the erasure did not run'];
  const out: string[] = [];
  if (v.run.answer === null) out.push('the erasure was not done');
  if (v.orders === 0) out.push('no order named the erased customer');
  if (v.found.length > 0)
    out.push(`${v.found.length} of the erased customer's personal values still in the kit's database`);
  if (v.kept.customers === 0 || v.kept.found < v.kept.values)
    out.push(
      `${v.kept.values - v.kept.found} values of the customers who stay not found: the search is blind`,
    );
  if (v.marked < v.orders) out.push(`${v.orders - v.marked} of the erased customer's orders not erased`);
  if (v.truth.untrue.length > 0) out.push(`${v.truth.untrue.length} erased orders not equal to the truth`);
  if (v.beside === null) out.push('the report around the erasure not read');
  else {
    if (v.beside.changed.length > 0)
      out.push(`${v.beside.changed.length} report rows changed by the erasure`);
    if (v.beside.erased === 0) out.push('no erased order still enough to compare its report row');
  }
  if (v.cards.saved === 0) out.push('no card saved for the erased customer');
  if (v.cards.active !== 0) out.push(`${v.cards.active ?? 'unread'} of their cards active at the gateway`);
  return out;
}

/** The details behind a failing erasure: the first few of each. */
export function erasureDetails(v: ErasureVerdict | null): string[] {
  if (v === null) return [];
  return [
    ...v.where.map((line) => `still in the database: ${line}`),
    ...v.truth.untrue.slice(0, 10),
    ...(v.beside?.changed.slice(0, 10) ?? []),
  ];
}
