import { Redis } from 'ioredis';
import { SUITE_PREFIX } from './process.js';

/**
 * Redis database indexes of their own for tests that look at the whole of Redis while the kit runs as
 * processes (what is queued, what is not). An index is claimed while empty and marked, and emptied
 * afterwards. (Each run's processes also have a key prefix of their own: SUITE_PREFIX.)
 */
export const REDIS_BASE = 'redis://127.0.0.1:6379';
const CLAIM_KEY = 'merchant-roles-test:claim';

/**
 * A Redis database index nobody uses: empty when looked at, then marked with a claim key (SET NX) so
 * that a concurrent run picks another. Returns a connection to it.
 */
export async function claimRedisDatabase(): Promise<{ index: number; redis: Redis }> {
  const probe = new Redis(REDIS_BASE, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await probe.connect();
  const configured = (await probe.config('GET', 'databases')) as string[];
  await probe.quit();
  const count = Number(configured[1] ?? 16);
  const indexes = Array.from({ length: count - 1 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
  for (const index of indexes) {
    const redis = new Redis(`${REDIS_BASE}/${index}`, { maxRetriesPerRequest: 1 });
    if (
      (await redis.dbsize()) === 0 &&
      (await redis.set(CLAIM_KEY, String(process.pid), 'EX', 3600, 'NX')) === 'OK'
    )
      return { index, redis };
    await redis.quit();
  }
  throw new Error('no empty Redis database index to claim');
}

/** Deletes what the processes left in a claimed index (the queue's keys) and the claim. */
export async function releaseRedisDatabase(redis: Redis): Promise<void> {
  const keys = await redis.keys(`${SUITE_PREFIX}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.del(CLAIM_KEY);
  await redis.quit();
}
