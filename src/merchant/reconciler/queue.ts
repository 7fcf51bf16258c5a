import Queue from 'bull';
import type { Redis } from 'ioredis';
import { createRedis } from '../../infra/redis.js';

export const OBSERVATION_QUEUE = 'observations';

export interface ObservationJob {
  /** The inbox row to apply; the job carries no payload, so nothing sensitive sits in Redis. */
  eventId: string;
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
  onRedisError?: (error: Error) => void,
): Queue.Queue<ObservationJob> {
  const shared: Partial<Record<'client' | 'subscriber', Redis>> = {};
  return new Queue<ObservationJob>(OBSERVATION_QUEUE, {
    prefix,
    createClient: (type) => {
      if (type === 'bclient') return createRedis(redisUrl, 'bclient', onRedisError);
      shared[type] ??= createRedis(redisUrl, type, onRedisError);
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
 * Many at once, in one round trip to Redis (bull's addBulk); an id already queued stays one job. One
 * alone is one `add`: the same script, without addBulk's MULTI and EXEC around it (half the CPU).
 */
export async function enqueueEvents(
  queue: Queue.Queue<ObservationJob>,
  eventIds: readonly string[],
): Promise<undefined[]> {
  if (eventIds.length === 1) await enqueueEvent(queue, eventIds[0]!);
  else await queue.addBulk(eventIds.map((eventId) => ({ data: { eventId }, opts: { jobId: eventId } })));
  return eventIds.map(() => undefined);
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
