import { delay } from '../test/support/process.js';
import { appliedTwice, comparison, sameTruth, truthOfPayment } from '../test/support/truth-rules.js';
import type { Duplicates } from './duplicates.js';
import type { EventRow, GatewayReader } from './gateway.js';
import type { KitTables, OrderRow } from './tables.js';

/**
 * The verdict, from the two sides' own records: the gateway's event history and transactions (over
 * its API) against the kit's inbox, history and orders (its tables). Nothing the kit says about
 * itself is taken on trust.
 */

const CONCURRENCY = 8;
const LOOK_EVERY_MS = 2000;
const TRUTH_EVERY_MS = 10_000;
const LOG_EVERY_MS = 10_000;

/** Where the kit stands against the gateway at one moment. */
export interface Look {
  events: EventRow[];
  /** Inbox rows of the gateway's events. */
  stored: number;
  /** Of those, processed through the apply path. */
  applied: number;
  /** Of those, the ones that changed an order (the rest it knew already, from its own calls or a poll). */
  changed: number;
  /** Stored with source `recovery`: fetched by the kit's recovery, not delivered. */
  recovered: number;
  /** Gateway events the kit never stored, or stored and never applied. */
  lost: string[];
  /**
   * Gateway events the inbox keeps as another merchant's than the one whose endpoint the gateway
   * delivers them to (platform mode), one line each.
   */
  misfiled: string[];
  appliedTwice: string[];
  /** One line per order that differs from the gateway's truth or waits for review; null: not checked. */
  untrue: string[] | null;
  /** Orders compared with a gateway record. */
  checked: number;
  orders: number;
  /** Per merchant the orders name (`-`: none), the same counts; empty until the truth is checked. */
  merchants: Record<string, MerchantCounts>;
}

/** One merchant's orders: how many, how many compared with a gateway record, how many untrue. */
export interface MerchantCounts {
  orders: number;
  checked: number;
  untrue: number;
}

/** Events, inbox and history: cheap, and enough to know whether a truth check is worth its calls. */
export async function lookAtEvents(tables: KitTables, reader: GatewayReader): Promise<Look> {
  const [events, inbox, history, orders] = await Promise.all([
    reader.events(),
    tables.inbox(),
    tables.history(),
    tables.orders(),
  ]);
  const ids = new Set(events.map((e) => e.id));
  const ours = inbox.filter((row) => ids.has(row.event_id));
  const applied = new Set(ours.filter((row) => Number(row.processed) === 1).map((row) => row.event_id));
  const kept = new Map(ours.map((row) => [row.event_id, row.merchant_id]));
  const misfiled = events.flatMap((e) => {
    const as = kept.get(e.id);
    return as === undefined || as === null || Number(as) === e.merchant_id
      ? []
      : [`event ${e.id} (${e.event_type}) of merchant ${e.merchant_id} kept as merchant ${as}'s`];
  });
  return {
    events,
    stored: ours.length,
    applied: applied.size,
    changed: ours.filter((row) => row.outcome === 'applied').length,
    recovered: ours.filter((row) => row.source === 'recovery').length,
    lost: events.filter((e) => !applied.has(e.id)).map((e) => e.id),
    misfiled,
    appliedTwice: appliedTwice(history),
    untrue: null,
    checked: 0,
    orders: orders.length,
    merchants: {},
  };
}

/**
 * Every order with a payment at the gateway (or only those of `only`), compared with the gateway's
 * record of it; the counts per merchant the orders name too.
 */
export async function untrueOrders(
  tables: KitTables,
  reader: GatewayReader,
  captures: ReadonlyMap<number, number>,
  only?: ReadonlySet<string>,
): Promise<{ untrue: string[]; checked: number; merchants: Record<string, MerchantCounts> }> {
  const all = (await tables.orders()).filter((o) => !only || only.has(o.id));
  const merchants: Record<string, MerchantCounts> = {};
  const countsOf = (o: OrderRow) => {
    const key = o.merchant_id === null ? '-' : String(o.merchant_id);
    merchants[key] ??= { orders: 0, checked: 0, untrue: 0 };
    return merchants[key];
  };
  for (const o of all) countsOf(o).orders += 1;
  const orders = all.filter((o) => o.kind !== null);
  const untrue: string[] = [];
  let checked = 0;
  let next = 0;
  const checker = async () => {
    while (next < orders.length) {
      const order = orders[next++]!;
      const problem = await orderProblem(order, reader, captures);
      if (problem === undefined) continue;
      checked += 1;
      countsOf(order).checked += 1;
      if (problem === null) continue;
      untrue.push(problem);
      countsOf(order).untrue += 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, checker));
  return { untrue, checked, merchants };
}

/**
 * What is wrong with the order (null: nothing); undefined: nothing of it at the gateway to compare.
 * An order that names a merchant must have its payment at that merchant.
 */
async function orderProblem(
  order: OrderRow,
  reader: GatewayReader,
  captures: ReadonlyMap<number, number>,
): Promise<string | null | undefined> {
  const found = await reader.payment(order, captures);
  if (!found) return undefined;
  if (order.merchant_id !== null && Number(order.merchant_id) !== found.merchantId)
    return `order ${order.id} (${order.reference}) is merchant ${order.merchant_id}'s, its payment merchant ${found.merchantId}'s at the gateway`;
  const { got, want } = comparison(order, truthOfPayment(order.kind!, found.payment, found.sessionStatus));
  if (!sameTruth(got, want))
    return `order ${order.id} (${order.reference}): ${JSON.stringify(got)}, the gateway: ${JSON.stringify(want)}`;
  if (Number(order.needs_review) !== 0) return `order ${order.id} needs review: ${order.review_reason}`;
  return null;
}

export interface Convergence {
  /** Seconds from `since` until everything agreed; null: not within the bound. */
  seconds: number | null;
  look: Look;
}

/**
 * Looks every 2 s until every gateway event is stored and applied and every order equals the truth
 * (checked at most every 10 s: it costs a call per order), or the bound passes.
 */
export async function converge(o: {
  tables: KitTables;
  reader: GatewayReader;
  duplicates: Duplicates;
  since: number;
  withinMs: number;
  log: (line: string) => void;
}): Promise<Convergence> {
  const deadline = o.since + o.withinMs;
  let truthAt = 0;
  let loggedAt = 0;
  for (;;) {
    const started = Date.now();
    const look = await lookAtEvents(o.tables, o.reader).catch(() => null);
    if (look && look.lost.length === 0 && started - truthAt >= TRUTH_EVERY_MS) {
      truthAt = started;
      await o.duplicates.catchUp();
      Object.assign(look, await untrueOrders(o.tables, o.reader, o.duplicates.captures()));
      if (look.untrue!.length === 0) return { seconds: (started - o.since) / 1000, look };
    }
    if (Date.now() > deadline) return { seconds: null, look: await fullLook(o) };
    if (look && started - loggedAt >= LOG_EVERY_MS) {
      loggedAt = started;
      o.log(progress(look));
    }
    await delay(LOOK_EVERY_MS);
  }
}

type Sides = { tables: KitTables; reader: GatewayReader; duplicates: Duplicates };

/** Events, inbox, history and the truth of every order. */
async function fullLook(o: Sides): Promise<Look> {
  const look = await lookAtEvents(o.tables, o.reader);
  await o.duplicates.catchUp();
  return Object.assign(look, await untrueOrders(o.tables, o.reader, o.duplicates.captures()));
}

/**
 * The look the verdict is read from, after the last copies were posted: once the worker has applied
 * whatever they brought (bounded by `withinMs`), the full look.
 */
export async function settledLook(o: Sides, withinMs = 60_000): Promise<Look> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline && (await lookAtEvents(o.tables, o.reader)).lost.length > 0)
    await delay(LOOK_EVERY_MS);
  return fullLook(o);
}

const progress = (look: Look) =>
  `converging: ${look.lost.length} of ${look.events.length} events not yet applied ` +
  `(${look.events.length - look.stored} not stored)` +
  (look.untrue === null ? '' : `, ${look.untrue.length} orders not yet true`);
