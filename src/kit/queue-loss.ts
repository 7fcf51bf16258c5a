import { setIfAbsent } from '../infra/redis.js';
import { QueueLossWatch } from '../merchant/jobs/queue-loss.js';
import { requeueUnprocessed } from '../merchant/jobs/sweeper.js';
import { type RandomSource, randomId } from '../shared/ids.js';
import type { Adapters } from './adapters.js';
import type { Shutdown } from './shutdown.js';

/**
 * How often each process looks at the marker: a FLUSHALL is found within this (a restart at once,
 * when the client connects again). One round trip a second per process.
 */
export const QUEUE_LOSS_LOOK_MS = 1000;

/**
 * The queue-loss watch of this process (merchant/jobs/queue-loss.ts), whatever its roles: a look
 * every `everyMs` and at each (re)connection of the process's Redis client; stopped with the kit.
 */
export function watchQueueLoss(
  a: Adapters,
  shutdown: Shutdown,
  random: RandomSource,
  everyMs = QUEUE_LOSS_LOOK_MS,
): QueueLossWatch {
  const key = `${a.redisPrefix}:marker`;
  const watch = new QueueLossWatch({
    claim: (token) => setIfAbsent(a.redis, key, token),
    token: `${process.pid}:${randomId('', random, 16)}`,
    requeue: () => requeueUnprocessed({ inbox: a.store.inbox, enqueue: a.enqueue, now: a.clock.now() }),
    now: () => performance.now(),
    logger: a.logger,
  });
  const look = () => void watch.look();
  const timer = setInterval(look, everyMs);
  a.redis.on('ready', look);
  look();
  shutdown.work({
    name: 'queue-loss watch',
    drain: async () => {
      clearInterval(timer);
      a.redis.off('ready', look);
      await watch.idle();
    },
  });
  return watch;
}
