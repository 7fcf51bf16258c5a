import type { Job } from 'bull';
import type { Logger } from 'pino';
import { type BatchOptions, batched } from '../../shared/batcher.js';
import type { Clock } from '../../shared/clock.js';
import { parseEvent } from '../orders/from-gateway.js';
import type { ObservationSource, TransactionObservation } from '../orders/observation.js';
import type { InboxStore } from '../store/inbox.js';
import type { LockTurn } from '../store/orders.js';
import type { InboxRecord } from '../store/records.js';
import type { Kept } from '../store/unmatched.js';
import type { ApplyMany, ApplyResult } from './apply.js';
import type { ObservationJob } from './queue.js';

/**
 * No attempt of ours has this transaction (yet): retried with backoff. A payment whose attempt is
 * being written at that very moment (the kit's own answer, a duplicate adopted) is found on a retry;
 * what is still unmatched at the last attempt is kept as gateway money with no order.
 */
export class UnmatchedEvent extends Error {
  override name = 'UnmatchedEvent';
}

/** A stored event that no longer reads as one: retrying cannot help, so it goes to the failed set at once. */
export class UnreadableEvent extends Error {
  override name = 'UnreadableEvent';
}

export interface WorkerDeps {
  inbox: Pick<InboxStore, 'getMany' | 'markFailedAttempt' | 'markProcessed'>;
  applyMany: ApplyMany;
  /** Keeps gateway money no attempt holds and flags its order (reconciler/unmatched.ts keepUnmatched). */
  keep: (obs: TransactionObservation) => Promise<Kept>;
  /** Gives events of a batch's job that need retries a job each (queue.ts requeueAlone). */
  requeueAlone: (eventIds: readonly string[]) => Promise<void>;
  clock: Clock;
  logger: Logger;
  /** How jobs in hand share a transaction: default BATCH. */
  batch?: BatchOptions;
}

/**
 * The jobs in hand go to MySQL together: one read of their inbox rows, one transaction for all of
 * them. At most 128 in one, two at once: under a backlog each commit carries many events, which is
 * what makes the worker fast (npm run bench); a lone event goes at once, alone.
 */
export const BATCH: BatchOptions = { maxBatch: 128, maxInFlight: 2 };

/** The jobs a worker process holds at once: enough for both batches in flight to be full. */
export const JOBS_IN_HAND = 2 * BATCH.maxBatch;

/** What became of one event of a batch. */
type EventVerdict =
  | { kind: 'missing' }
  | { kind: 'processed' }
  | { kind: 'unreadable'; problem: string }
  | { kind: 'applied'; observation: TransactionObservation; result: ApplyResult };

/**
 * Batches lock their orders in the order they started (orders.ts LockTurn): a batch reads and plans
 * while the one before it writes, but takes its row locks only after that one holds its own, so an
 * order's events apply in the order their jobs came (a chargeback before its reversal), not in the
 * order two reads happened to end.
 */
function lockTurns(): () => LockTurn {
  let last: Promise<unknown> = Promise.resolve();
  return () => {
    const after = last;
    let locked!: () => void;
    last = new Promise<void>((resolve) => {
      locked = resolve;
    });
    return { after, locked };
  };
}

/** Whether this run of the job is its last: bull counts the attempts made before this one. */
const lastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

/**
 * The reconciler: an inbox event becomes an observation (parseEvent, the receiver's own reading) and
 * goes through the one apply path, with the other events in hand, applied and marked processed in
 * one transaction (a crash in between cannot apply one twice). Each job still answers for its own
 * event: retried when no attempt holds it yet, kept as money with no order at its last attempt.
 */
export function eventProcessor(deps: WorkerDeps) {
  const nextTurn = lockTurns();
  const apply = batched((ids: readonly string[]) => applyEvents(deps, ids, nextTurn()), deps.batch ?? BATCH);
  const flagged = (eventId: string, result: ApplyResult) =>
    deps.logger.warn(
      { event: eventId, order: result.orderId, note: result.decision!.note },
      'order needs review',
    );
  return async (job: Job<ObservationJob>): Promise<string> => {
    if ('eventIds' in job.data) return applyBatchJob(deps, job.data.eventIds, apply, flagged);
    const { eventId } = job.data;
    const verdict = await apply(eventId);
    if (verdict.kind === 'missing') return 'missing';
    if (verdict.kind === 'processed') return 'already processed';
    if (verdict.kind === 'unreadable') {
      await deps.inbox.markFailedAttempt(eventId, `unreadable: ${verdict.problem}`);
      await job.discard();
      throw new UnreadableEvent(`inbox event ${eventId} is unreadable: ${verdict.problem}`);
    }
    const { observation, result } = verdict;
    if (result.foreign) {
      // An event of one merchant's endpoint about another merchant's order (issue 45): that order is
      // not changed, now or on any retry. The money is kept as the event's merchant's, with no order.
      deps.logger.warn(
        {
          event: eventId,
          transaction: observation.transaction.id,
          order: result.foreign.orderId,
          order_merchant: result.foreign.orderMerchant,
          event_merchant: result.foreign.eventMerchant,
        },
        "webhook about another merchant's order: not applied to it, kept as money with no order",
      );
    }
    if (!result.matched && (lastAttempt(job) || result.foreign)) {
      // Still no attempt holds it after every retry: gateway money with no order. Kept in
      // unmatched_money and its order flagged (a failure to do so throws: the job fails and an
      // operator can retry it), then processed with the outcome `unmatched`: nothing is lost, and
      // retrying would change nothing.
      const kept = await deps.keep(observation);
      await deps.inbox.markProcessed(eventId, 'unmatched', new Date(deps.clock.now()));
      return kept.first ? 'unmatched: kept' : 'unmatched: seen again';
    }
    if (!result.matched) {
      await deps.inbox.markFailedAttempt(eventId, `no order has transaction ${observation.transaction.id}`);
      throw new UnmatchedEvent(`no order has transaction ${observation.transaction.id} (event ${eventId})`);
    }
    const outcome = result.decision!.outcome;
    if (outcome === 'flagged') flagged(eventId, result);
    return outcome;
  };
}

/**
 * A job of several events (the receiver's batch): each goes through the same batched apply as the
 * jobs in hand. What is done is done; an event that needs a retry of its own (no attempt holds it
 * yet, a failure, a row that no longer reads) gets a job of its own, and from there is handled as an
 * event queued alone. Should that queueing fail, the job fails and bull runs it again: the events
 * already applied are then `already processed`.
 */
async function applyBatchJob(
  deps: WorkerDeps,
  eventIds: readonly string[],
  apply: (eventId: string) => Promise<EventVerdict>,
  flagged: (eventId: string, result: ApplyResult) => void,
): Promise<string> {
  const verdicts = await Promise.all(eventIds.map((id) => apply(id).catch((error: Error) => error)));
  const tally = new Map<string, number>();
  const alone: string[] = [];
  const failedAttempts: Promise<void>[] = [];
  verdicts.forEach((verdict, i) => {
    const eventId = eventIds[i]!;
    const outcome = settledOutcome(verdict);
    if (outcome === null) alone.push(eventId);
    else tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
    if (outcome === 'flagged') flagged(eventId, (verdict as { result: ApplyResult }).result);
    // The batch's run was the event's first attempt: its row says so, as a job of its own's would.
    const failure = failedAttemptOf(verdict);
    if (failure !== null) failedAttempts.push(deps.inbox.markFailedAttempt(eventId, failure));
  });
  await Promise.all(failedAttempts);
  await deps.requeueAlone(alone);
  if (alone.length > 0) tally.set('retried alone', alone.length);
  return [...tally].map(([outcome, n]) => `${outcome} ${n}`).join(', ');
}

/**
 * What a first attempt that found no attempt holding the event's transaction writes on its inbox
 * row, as the job of an event alone does; null otherwise (a failure is its job's to record, an
 * unreadable row its own job marks and fails at once).
 */
function failedAttemptOf(verdict: EventVerdict | Error): string | null {
  if (verdict instanceof Error) return null;
  if (verdict.kind === 'applied' && !verdict.result.matched)
    return `no order has transaction ${verdict.observation.transaction.id}`;
  return null;
}

/** What an event of a batch came to, or null when it needs a job of its own. */
function settledOutcome(verdict: EventVerdict | Error): string | null {
  if (verdict instanceof Error) return null;
  switch (verdict.kind) {
    case 'missing':
      return 'missing';
    case 'processed':
      return 'already processed';
    case 'unreadable':
      return null;
    case 'applied':
      return verdict.result.matched ? verdict.result.decision!.outcome : null;
    default:
      return verdict satisfies never;
  }
}

/**
 * One batch: the inbox rows read at once, the readable and unprocessed ones applied together, in the
 * order their jobs came (an order's events in their order). An id twice in one batch (a job queued
 * again by the sweeper) is applied once and answered the same twice.
 */
async function applyEvents(
  deps: WorkerDeps,
  ids: readonly string[],
  turn: LockTurn,
): Promise<(EventVerdict | Error)[]> {
  let rows: Map<string, InboxRecord>;
  try {
    rows = await deps.inbox.getMany(ids);
  } catch (error) {
    turn.locked(); // its turn given up: the batches after it go on
    throw error;
  }
  const now = deps.clock.now();
  const verdicts = new Map<string, EventVerdict | Error>();
  const toApply: { eventId: string; observation: TransactionObservation }[] = [];
  for (const eventId of new Set(ids)) {
    const row = rows.get(eventId);
    if (!row) verdicts.set(eventId, { kind: 'missing' });
    else if (row.processed_at) verdicts.set(eventId, { kind: 'processed' });
    else {
      const masked = row.masked_fields === null ? undefined : [row.masked_fields];
      const event = parseEvent(row.payload, row.source as ObservationSource, now, masked);
      // Whose endpoint it came to: it may change that merchant's orders only (issue 45).
      if (event.kind === 'observation')
        toApply.push({ eventId, observation: { ...event.observation, merchant: row.merchant_id } });
      else
        verdicts.set(eventId, {
          kind: 'unreadable',
          problem: event.kind === 'ping' ? 'a ping carries no transaction' : event.message,
        });
    }
  }
  const results = await deps.applyMany(
    toApply.map((e) => ({ obs: e.observation, options: { inboxEventId: e.eventId } })),
    turn,
  );
  toApply.forEach((e, i) => {
    const result = results[i]!;
    verdicts.set(
      e.eventId,
      result instanceof Error ? result : { kind: 'applied', observation: e.observation, result },
    );
  });
  return ids.map((id) => verdicts.get(id)!);
}
