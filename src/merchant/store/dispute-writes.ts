import type { DisputeBook, DisputeEntry, DisputePlan } from '../orders/disputes.js';
import type { Statement } from './batch-writes.js';
import type { DisputeRecord, ReversalRecord } from './records.js';

/*
 * Dispute records as the order writer reads and writes them (store/order-writer.ts): read with the
 * orders a batch locks (every dispute write is made under its order's lock, so a plain read after
 * the lock sees them all), handed to the pure rule (orders/disputes.ts) as an attempt's book, and
 * the rule's plan written back in the batch's transaction.
 */

/** The locked orders' dispute records (a column list the batch's locking read carries). */
export const disputesRead = (where: string) =>
  `SELECT d.* FROM orders o JOIN disputes d ON d.order_id = o.id WHERE ${where}`;

/** The locked orders' reversals heard of. */
export const reversalsRead = (where: string) =>
  `SELECT r.* FROM orders o JOIN dispute_reversals r ON r.order_id = o.id WHERE ${where}`;

/** A row of `disputes` as its record (BIGINT may come back as text). */
export const disputeFrom = (row: Record<string, unknown>): DisputeRecord =>
  ({ ...row, amount_minor: Number(row.amount_minor) }) as DisputeRecord;

/** What the rule knows of one attempt's disputes. */
export function bookOf(
  disputes: readonly DisputeRecord[],
  reversals: readonly ReversalRecord[],
  attemptId: string,
): DisputeBook {
  return {
    records: disputes.filter((d) => d.attempt_id === attemptId).map(entryOf),
    reversals: reversals.filter((r) => r.attempt_id === attemptId).map((r) => r.reversed_at.getTime()),
  };
}

function entryOf(d: DisputeRecord): DisputeEntry {
  return {
    id: d.id,
    chargedBackAt: d.charged_back_at?.getTime() ?? null,
    openedAt: d.opened_at.getTime(),
    amountMinor: d.amount_minor,
    outcome: d.outcome,
    closedAt: d.closed_at?.getTime() ?? null,
    closedBy: d.closed_by,
  };
}

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms));

/** The columns the rule decides. */
function columnsOf(e: DisputeEntry) {
  return {
    charged_back_at: dateOrNull(e.chargedBackAt),
    opened_at: new Date(e.openedAt),
    amount_minor: e.amountMinor,
    outcome: e.outcome,
    closed_at: dateOrNull(e.closedAt),
    closed_by: e.closedBy,
  };
}

/** Whose records a plan writes: the locked order's attempt, its payment and currency. */
export interface PlanOwner {
  orderId: string;
  attemptId: string;
  transactionId: string | null;
  currency: string;
}

/**
 * A plan's statements, in order (a record made by one step of a batch may be changed by the next),
 * and the rows as they stand after them. `existing`: the records the plan's book was read from.
 */
export function planWrites(
  plan: DisputePlan,
  owner: PlanOwner,
  existing: ReadonlyMap<string, DisputeRecord>,
  newId: () => string,
): { statements: Statement[]; records: DisputeRecord[]; reversals: ReversalRecord[] } {
  const statements: Statement[] = [];
  const records = plan.records.map((e): DisputeRecord => {
    const columns = columnsOf(e);
    const known = e.id === null ? undefined : existing.get(e.id);
    if (known) {
      statements.push({ sql: 'UPDATE disputes SET ? WHERE id = ?', values: [columns, known.id] });
      return { ...known, ...columns };
    }
    const made: DisputeRecord = {
      id: newId(),
      order_id: owner.orderId,
      attempt_id: owner.attemptId,
      transaction_id: owner.transactionId,
      currency: owner.currency,
      note: null,
      ...columns,
    };
    statements.push({ sql: 'INSERT INTO disputes SET ?', values: [made] });
    return made;
  });
  const reversals = plan.reversals.map(
    (at): ReversalRecord => ({
      order_id: owner.orderId,
      attempt_id: owner.attemptId,
      reversed_at: new Date(at),
    }),
  );
  for (const r of reversals) statements.push({ sql: 'INSERT INTO dispute_reversals SET ?', values: [r] });
  return { statements, records, reversals };
}
