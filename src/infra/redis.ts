import { Redis, type RedisOptions } from 'ioredis';
import { cryptoRandom, type RandomSource, randomId } from '../shared/ids.js';
import { SettingError } from '../shared/setting-error.js';

/** What a Redis client tells of its connection: each failure (every reconnection tried), each (re)connection. */
export interface RedisHealth {
  failed?: (error: Error) => void;
  available?: () => void;
}

/**
 * Redis connections from REDIS_URL (a database index in the path is honoured by ioredis). bull's
 * blocking and subscriber connections need `maxRetriesPerRequest: null` and no ready check. While
 * Redis is down commands wait for it: callers on a hot path (the receiver) bound them with a deadline.
 */
export function createRedis(
  url: string,
  kind: 'client' | 'bclient' | 'subscriber' = 'client',
  health: RedisHealth = {},
  extra: RedisOptions = {},
): Redis {
  const blocking = kind !== 'client';
  const redis = new Redis(url, {
    maxRetriesPerRequest: blocking ? null : 1,
    enableReadyCheck: !blocking,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...extra,
  });
  // ioredis reconnects by itself; without a listener each failed attempt is an "unhandled error" on stderr.
  redis.on('error', health.failed ?? (() => {}));
  // A blocking client has no ready check: its 'ready' says only that a socket opened, whatever answers.
  if (health.available && !blocking) redis.on('ready', health.available);
  return redis;
}

/** REDIS_URL names a Redis that answers and refuses it: the process stops with this one line. */
export class RedisUrlError extends SettingError {
  readonly label = 'REDIS_URL';
}

/**
 * Start-up's look at REDIS_URL: a Redis that answers and refuses what the URL asks (a password or
 * user it does not know, a database index beyond its count), or a port where something else
 * answers, is a setting to fix, and the clients would retry it for ever. A Redis that does not answer
 * is not: the kit starts without it (merchant.md: the receiver stores and answers; the sweeper
 * queues later), so that says null too.
 */
export async function redisRefusal(url: string, timeoutMs = 2000): Promise<RedisUrlError | null> {
  const redis = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
  });
  // ioredis reports a refused AUTH or SELECT as an 'error' and goes on; PING's answer comes after it.
  const errors: Error[] = [];
  redis.on('error', (error: Error) => errors.push(error));
  try {
    await redis.connect();
    await redis.ping();
  } catch {
    // Not answering, or the connection closed on a refusal: the errors say which.
  } finally {
    redis.disconnect();
  }
  const refused = errors.find((e) => e.name === 'ReplyError');
  if (refused) return new RedisUrlError(`Redis refuses it (${refused.message})`);
  if (errors.some((e) => e.name === 'ParserError'))
    return new RedisUrlError("what answers at that address does not speak Redis (another service's port?)");
  return null;
}

/**
 * A lock for one instance at a time (SET NX PX); released only by its holder, whom a random token
 * tells apart from the next holder once the lock expired. While `fn` runs the holder extends the lock
 * every third of `ttlMs`, so a long run (a recovery of thousands of events) keeps it, and a holder that
 * dies loses it within `ttlMs`. Null: another holder has it.
 */
export async function withLock<T>(
  redis: Redis,
  key: string,
  ttlMs: number,
  fn: () => Promise<T>,
  random: RandomSource = cryptoRandom,
): Promise<T | null> {
  const token = `${process.pid}:${randomId('', random, 16)}`;
  const acquired = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (acquired !== 'OK') return null;
  const renewal = setInterval(
    () => {
      redis.eval(IF_OURS_EXTEND, 1, key, token, ttlMs).catch(() => {}); // a missed renewal: the next one, or expiry
    },
    Math.max(100, Math.floor(ttlMs / 3)),
  );
  try {
    return await fn();
  } finally {
    clearInterval(renewal);
    // Delete only if still ours: the lock may have expired and been taken by another instance. A
    // release Redis did not take (down since) lets the lock expire within ttlMs, and must not turn
    // `fn`'s outcome into Redis's error.
    await redis.eval(IF_OURS_DELETE, 1, key, token).catch(() => {});
  }
}

const IF_OURS_DELETE =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const IF_OURS_EXTEND =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/**
 * Sets `key` to `value` unless it holds one, in one step: answers what it held, or null when it held
 * nothing (and holds `value` now). What the queue-loss watch marks a Redis with.
 */
export async function setIfAbsent(redis: Redis, key: string, value: string): Promise<string | null> {
  return (await redis.eval(GET_OR_SET, 1, key, value)) as string | null;
}

const GET_OR_SET =
  "local held = redis.call('get', KEYS[1]) if held then return held end redis.call('set', KEYS[1], ARGV[1]) return false";
