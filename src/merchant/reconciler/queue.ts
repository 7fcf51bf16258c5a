import Queue from 'bull';
import type { Redis } from 'ioredis';
import { createRedis, type RedisHealth } from '../../infra/redis.js';

export const OBSERVATION_QUEUE = 'observations';

/**
 * What a job applies: inbox rows, by event id; the job carries no payload, so nothing sensitive sits
 * in Redis. One event (job id = event id: the same event queued twice is one job), or the events the
 * receiver stored together (one job for the batch, its id bull's own): bull's cost is per job, and
 * a job an event was half of what a worker spent on an event (npm run bench).
 */
export type ObservationJob = { eventId: string } | { eventIds: string[] };

/** The event ids a job carries, in the order they were stored. */
export function eventIdsOf(job: ObservationJob): string[] {
  return 'eventIds' in job ? job.eventIds : [job.eventId];
}

/**
 * The reconciler's queue. Job id = event id, so the same event queued twice is one job. bull is
 * at-least-once (a stalled job runs again): applying an observation twice is harmless by design.
 * Failed jobs are kept, for operators to see and retry.
 */
export interface RetryPolicy {
  /** Default 8. */
  attempts: number;
  /** First backoff; doubles each time. Default 1000 ms. */
  delayMs: number;
}

export function createObservationQueue(
  redisUrl: string,
  prefix = 'kit',
  retry: RetryPolicy = { attempts: 8, delayMs: 1000 },
  redisHealth?: RedisHealth,
): Queue.Queue<ObservationJob> {
  const shared: Partial<Record<'client' | 'subscriber', Redis>> = {};
  return new Queue<ObservationJob>(OBSERVATION_QUEUE, {
    prefix,
    createClient: (type) => {
      if (type === 'bclient') return createRedis(redisUrl, 'bclient', redisHealth);
      shared[type] ??= createRedis(redisUrl, type, redisHealth);
      return shared[type]!;
    },
    defaultJobOptions: {
      attempts: retry.attempts,
      backoff: { type: 'exponential', delay: retry.delayMs },
      removeOnComplete: 1000,
      removeOnFail: false,
    },
  });
}

export async function enqueueEvent(queue: Queue.Queue<ObservationJob>, eventId: string): Promise<void> {
  await queue.add({ eventId }, { jobId: eventId });
}

/**
 * Many at once: one job for them all (the receiver's batches), one round trip and one job for the
 * worker to take. One alone is a job of its own, its id the event id. Either way a job is answered
 * for each id, in order.
 */
export async function enqueueEvents(
  queue: Queue.Queue<ObservationJob>,
  eventIds: readonly string[],
): Promise<undefined[]> {
  if (eventIds.length === 1) await enqueueEvent(queue, eventIds[0]!);
  else if (eventIds.length > 1) await queue.add({ eventIds: [...eventIds] });
  return eventIds.map(() => undefined);
}

/**
 * Events of a batch's job that need retries of their own (no attempt holds them yet, a failure, a row
 * that no longer reads): each its own job, id = event id, after the queue's first backoff and with
 * one attempt fewer, the batch's run having been their first. From there each is retried, kept as
 * gateway money with no order or failed for operators exactly as an event queued alone, in as many
 * attempts in all.
 */
export async function requeueAlone(
  queue: Queue.Queue<ObservationJob>,
  eventIds: readonly string[],
): Promise<void> {
  if (eventIds.length === 0) return;
  // The queue's own options (createObservationQueue): bull keeps them on the queue, untyped.
  const defaults = (queue as unknown as { defaultJobOptions?: Queue.JobOptions }).defaultJobOptions;
  const backoff = defaults?.backoff;
  const delay = typeof backoff === 'object' ? (backoff.delay ?? 0) : (backoff ?? 0);
  const attempts = Math.max(1, (defaults?.attempts ?? 1) - 1);
  await queue.addBulk(
    eventIds.map((eventId) => ({ data: { eventId }, opts: { jobId: eventId, delay, attempts } })),
  );
}

/**
 * Closes the queue and the Redis connections it opened. bull closes no connection it got from a
 * `createClient` (above): they are ours to close, once the worker is paused and its job in hand done.
 */
export async function closeQueue(queue: Queue.Queue): Promise<void> {
  await queue.close(true);
  // bull opens each connection when it is first used, and says which through these flags.
  const q = queue as unknown as Record<string, unknown>;
  for (const [flag, connection] of [
    ['clientInitialized', 'client'],
    ['subscriberInitialized', 'eclient'],
    ['bclientInitialized', 'bclient'],
  ] as const) {
    if (q[flag] === true) (q[connection] as Redis).disconnect();
  }
}
