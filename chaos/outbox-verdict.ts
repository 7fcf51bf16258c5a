import { orderEventsOf } from '../src/merchant/orders/order-events.js';
import { ORDER_STATUSES, type OrderStatus } from '../src/merchant/orders/status.js';
import type { Receipt } from './shop-endpoint.js';
import type { OrderEventRow } from './tables.js';

/**
 * The outbox part's verdict, pure: the kit's outbox rows (what it wrote, in the changes' own
 * transactions) against what the shop's endpoint received. Every event taken at least once, with its
 * own id and its own body; every request verified; each order's events first taken in the order they
 * were written; each order's last event saying what the order is now.
 */

/** What the verdict reads. */
export interface OutboxEvidence {
  rows: readonly OrderEventRow[];
  /** Every request the endpoint received, in the order it received them. */
  receipts: readonly Receipt[];
  orders: readonly { id: string; status: string }[];
  /** When the endpoint came back (wall clock, ms), and the last event written by then (its seq). */
  backAt: number;
  backSeq: number;
  /** The sandbox's clock (the kit's, beside it) at a moment of the wall clock. */
  sandboxAt: (wallMs: number) => number;
}

export interface OutboxLook {
  events: number;
  byType: Record<string, number>;
  /** Orders with at least one event; of them, with two or more (where order can be wrong). */
  orders: { told: number; several: number };
  requests: number;
  outcomes: Record<Receipt['outcome'], number>;
  /** Requests that did not verify, with the library or by the specification's recipe: a line each. */
  unverified: string[];
  /** Events the shop never took (taken, or held: it has it even if the kit never heard). */
  lost: string[];
  /** Requests whose id no event of the outbox has. */
  unknown: string[];
  /** Requests with an event's id and another body. */
  altered: string[];
  /** Events taken more than once, and the takes beyond the first. */
  duplicated: { events: number; receipts: number };
  /** Orders whose events were first taken in another order than written: a line each. */
  outOfOrder: string[];
  /** Orders whose last event's status is not the order's (a change that told the shop nothing). */
  untold: string[];
  /** Events not taken when the endpoint came back, and how long the last of them waited from then. */
  waiting: { events: number; sandboxSeconds: number; wallSeconds: number } | null;
}

/** Statuses no event tells: going back to pending, a payment started (`orderEventsOf`). */
export const EVENTLESS: readonly string[] = ORDER_STATUSES.filter(
  (status) => orderEventsOf(moment(status === 'pending' ? 'failed' : 'pending'), moment(status)).length === 0,
);

function moment(status: OrderStatus) {
  return { status, refunded_minor: 0, needs_review: false, review_reason: null };
}

const taken = (r: Receipt) => r.outcome === 'taken' || r.outcome === 'held';

export function judgeOutbox(e: OutboxEvidence): OutboxLook {
  const byId = new Map(e.rows.map((row) => [row.id, row]));
  const outcomes: Record<Receipt['outcome'], number> = { taken: 0, held: 0, refused: 0, forged: 0 };
  const unverified: string[] = [];
  const unknown: string[] = [];
  const altered: string[] = [];
  /** Each event's first take: its place among the requests, and when. */
  const first = new Map<string, { index: number; at: number }>();
  const takes = new Map<string, number>();
  for (const [index, r] of e.receipts.entries()) {
    outcomes[r.outcome] += 1;
    if (!r.library || !r.spec || r.error !== null)
      unverified.push(`${r.id || '(no webhook-id)'}: ${r.error ?? 'not verified'}`);
    const row = byId.get(r.id);
    if (!row) {
      unknown.push(`${r.id || '(no webhook-id)'} (${r.type ?? 'no type'})`);
      continue;
    }
    if (r.body !== row.payload) altered.push(`${r.id} (${row.type} of ${row.order_id})`);
    if (!taken(r)) continue;
    takes.set(r.id, (takes.get(r.id) ?? 0) + 1);
    if (!first.has(r.id)) first.set(r.id, { index, at: r.at });
  }

  const byOrder = new Map<string, OrderEventRow[]>();
  for (const row of e.rows) byOrder.set(row.order_id, [...(byOrder.get(row.order_id) ?? []), row]);
  const outOfOrder: string[] = [];
  const untold: string[] = [];
  const statusOf = new Map(e.orders.map((o) => [o.id, o.status]));
  for (const [orderId, events] of byOrder) {
    events.sort((a, b) => a.seq - b.seq);
    const seen = events.filter((row) => first.has(row.id));
    const inOrder = seen.every(
      (row, i) => i === 0 || first.get(row.id)!.index > first.get(seen[i - 1]!.id)!.index,
    );
    if (!inOrder) {
      const arrived = [...seen].sort((a, b) => first.get(a.id)!.index - first.get(b.id)!.index);
      outOfOrder.push(
        `${orderId}: written ${events.map((r) => r.type).join(', ')}; first taken ${arrived.map((r) => r.type).join(', ')}`,
      );
    }
    const last = events.at(-1)!;
    const said = statusInPayload(last.payload);
    const now = statusOf.get(orderId);
    if (now !== undefined && !EVENTLESS.includes(now) && said !== now)
      untold.push(`${orderId}: ${now}, its last event ${last.type} (${said ?? 'no status'})`);
  }

  const lost = e.rows
    .filter((row) => !first.has(row.id))
    .map((row) => `${row.id} (${row.type} of ${row.order_id})`);
  const backSandbox = e.sandboxAt(e.backAt);
  const waited = e.rows
    .filter((row) => row.seq <= e.backSeq && first.has(row.id) && first.get(row.id)!.at >= e.backAt)
    .map((row) => first.get(row.id)!.at);
  const last = waited.length === 0 ? null : Math.max(...waited);
  const byType: Record<string, number> = {};
  for (const row of e.rows) byType[row.type] = (byType[row.type] ?? 0) + 1;
  const again = [...takes.values()].filter((n) => n > 1);
  return {
    events: e.rows.length,
    byType,
    orders: { told: byOrder.size, several: [...byOrder.values()].filter((rows) => rows.length > 1).length },
    requests: e.receipts.length,
    outcomes,
    unverified,
    lost,
    unknown,
    altered,
    duplicated: { events: again.length, receipts: again.reduce((sum, n) => sum + n - 1, 0) },
    outOfOrder,
    untold,
    waiting:
      last === null
        ? null
        : {
            events: waited.length,
            sandboxSeconds: (e.sandboxAt(last) - backSandbox) / 1000,
            wallSeconds: (last - e.backAt) / 1000,
          },
  };
}

function statusInPayload(payload: string): string | null {
  try {
    return (JSON.parse(payload) as { data?: { order?: { status?: string } } }).data?.order?.status ?? null;
  } catch {
    return null;
  }
}

/** What happened around the verdict: the run's own facts, judged beside the look. */
export interface OutboxRun {
  /** Requests the endpoint held when the dispatcher's process was SIGKILLed (0: the kill was not mid-delivery). */
  heldAtKill: number;
  /** The kit's deliveries to the endpoint left `pending` or `failed` (given up) at the end. */
  leftOver: number;
  /** Kit processes that died without the run killing them. */
  crashed: number;
  /** Seconds (wall) from the endpoint's return until every event was taken and the kit agreed; null: not within the bound. */
  convergedSeconds: number | null;
}

/** Why the part fails; empty when it passes. */
export function outboxFailures(look: OutboxLook, run: OutboxRun): string[] {
  const out: string[] = [];
  const some = (lines: readonly string[], what: string) => {
    if (lines.length > 0) out.push(`${lines.length} ${what}`);
  };
  some(look.unverified, 'requests that did not verify');
  some(look.lost, 'events lost (never taken by the shop)');
  some(look.unknown, 'requests with an id no event has');
  some(look.altered, "requests with an event's id and another body");
  some(look.outOfOrder, 'orders whose events were first taken out of order');
  some(look.untold, 'orders whose last event is not what the order is');
  if (look.events === 0) out.push('no order events at all');
  if (run.heldAtKill === 0) out.push('the SIGKILL caught no delivery in flight');
  if (run.leftOver > 0) out.push(`${run.leftOver} deliveries the kit still has pending or gave up`);
  if (run.crashed > 0) out.push(`${run.crashed} kit processes died on their own`);
  if (run.convergedSeconds === null) out.push('not every event taken within the bound');
  return out;
}
