import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  type Budget,
  type BudgetOptions,
  type BudgetReport,
  type Caller,
  DEFAULT_BUDGET,
  lastRemainingOf,
  MemoryBudget,
  minuteStarts,
  pacingOf,
  priorityOf,
  SPEND_RETENTION_MINUTES,
  type SpendRow,
  spendRow,
  WINDOW_MS,
} from '../client/budget.js';

/**
 * `decide` of src/client/budget.ts, step for step, on the key's shared state: every process that
 * uses the API key spends from this one budget. Time comes in ARGV (the callers' clock, never Redis
 * TIME), so tests drive it and the policy reads one clock. Expiries only bound what Redis keeps: each
 * outlives what the policy still reads by `keep` ms.
 */
const RESERVE = `
local log, seq, pace, block, remaining, spend, fg, bg =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local now = tonumber(ARGV[1])
local background = ARGV[2] == 'background'
local caller = ARGV[3]
local limit, reserve = tonumber(ARGV[4]), tonumber(ARGV[5])
local interval, tolerance = tonumber(ARGV[6]), tonumber(ARGV[7])
local window, keep, spendTtl = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local keyLimit, reserved = tonumber(ARGV[11]), tonumber(ARGV[12])
-- Whole milliseconds written as digits, whatever number format this Redis version would pick.
local function ms(x) return string.format('%d', x) end
-- roomIn: the wait until fewer than n of the calls in the set remain in the window.
local function room(set, n)
  if n <= 0 then return math.huge end
  local count = redis.call('ZCARD', set)
  if count < n then return 0 end
  local first = redis.call('ZRANGE', set, count - n, count - n, 'WITHSCORES')
  return tonumber(first[2]) + window - now
end

redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', fg, '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', bg, '-inf', now - window)
local wait = math.max(0, tonumber(redis.call('GET', block) or '0') - now)
local all = room(log, keyLimit)
local from = 0
if background then
  local ownShare = math.max(all, room(bg, reserved))
  local quiet = room(log, limit)
  local seen = redis.call('HMGET', remaining, 'value', 'at')
  if seen[1] and seen[2] then
    local value, at = tonumber(seen[1]), tonumber(seen[2])
    if now - at < window and value <= reserve then quiet = math.max(quiet, at + window - now) end
  end
  wait = math.max(wait, math.min(ownShare, quiet))
  from = math.max(tonumber(redis.call('GET', pace) or '0'), now)
  wait = math.max(wait, from + interval - tolerance - now)
else
  wait = math.max(wait, all, room(fg, keyLimit - reserved))
end
if wait > 0 then
  redis.call('HINCRBY', spend, caller .. ':waited', 1)
  redis.call('PEXPIRE', spend, spendTtl)
  return wait
end

local member = ms(now) .. ':' .. redis.call('INCR', seq)
local own = fg
if background then own = bg end
redis.call('ZADD', log, ms(now), member)
redis.call('ZADD', own, ms(now), member)
redis.call('PEXPIRE', log, window + keep)
redis.call('PEXPIRE', own, window + keep)
redis.call('PEXPIRE', seq, window + keep)
if background then redis.call('SET', pace, ms(from + interval), 'PX', ms(from + interval - now + keep)) end
redis.call('HINCRBY', spend, caller, 1)
redis.call('PEXPIRE', spend, spendTtl)
return 0
`;

/** `observed` of src/client/budget.ts. */
const OBSERVE = `
local block, remaining = KEYS[1], KEYS[2]
local now, window, keep = tonumber(ARGV[1]), tonumber(ARGV[4]), tonumber(ARGV[5])
local function ms(x) return string.format('%d', x) end
if ARGV[2] ~= '' then
  redis.call('HSET', remaining, 'value', ARGV[2], 'at', ms(now))
  redis.call('PEXPIRE', remaining, window + keep)
end
if ARGV[3] ~= '' then
  local untilAt = now + math.ceil(tonumber(ARGV[3]) * 1000)
  if untilAt > tonumber(redis.call('GET', block) or '0') then
    redis.call('SET', block, ms(untilAt), 'PX', ms(untilAt - now + keep))
  end
end
return 0
`;

/** How long each key outlives what the policy reads, for clocks of processes that differ a little. */
const KEEP_MS = 5_000;

interface BudgetCommands {
  gatewayBudgetReserve(...args: (string | number)[]): Promise<number>;
  gatewayBudgetObserve(...args: (string | number)[]): Promise<number>;
}

export interface RedisBudgetOptions {
  redis: Redis;
  /** Key prefix of this deployment (the kit's Redis prefix). */
  prefix: string;
  /** Only a digest of it names the keys: the key itself never reaches Redis. */
  apiKey: string;
  now: () => number;
  options?: BudgetOptions;
  /** How long a reserve or observe waits for Redis before deciding without it. Default 200 ms. */
  timeoutMs?: number;
  /** After Redis failed, how long (by `now`) to decide without it before trying again. Default 5 s. */
  retryRedisAfterMs?: number;
}

/**
 * The budget of an API key shared by every process through Redis. Checkout never depends on Redis:
 * when it fails (an error, or no answer within `timeoutMs`) foreground calls go at once and
 * background calls fall back to this process's own budget until Redis answers again.
 */
export class RedisBudget implements Budget, BudgetReport {
  readonly options: BudgetOptions;
  readonly #redis: Redis & BudgetCommands;
  readonly #base: string;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #retryRedisAfterMs: number;
  readonly #fallback: MemoryBudget;
  #redisDownUntil = Number.NEGATIVE_INFINITY;

  constructor(o: RedisBudgetOptions) {
    this.options = o.options ?? DEFAULT_BUDGET;
    this.#now = o.now;
    this.#timeoutMs = o.timeoutMs ?? 200;
    this.#retryRedisAfterMs = o.retryRedisAfterMs ?? 5_000;
    this.#fallback = new MemoryBudget(o.now, this.options);
    const digest = createHash('sha256').update(o.apiKey).digest('hex').slice(0, 16);
    this.#base = `${o.prefix}:budget:${digest}`;
    const redis = o.redis as Redis & Partial<BudgetCommands>;
    // The scripts go by their digest (EVALSHA, loaded once per connection): defined once per connection.
    if (!redis.gatewayBudgetReserve)
      redis.defineCommand('gatewayBudgetReserve', { numberOfKeys: 8, lua: RESERVE });
    if (!redis.gatewayBudgetObserve)
      redis.defineCommand('gatewayBudgetObserve', { numberOfKeys: 2, lua: OBSERVE });
    this.#redis = redis as Redis & BudgetCommands;
  }

  /** The Redis keys of this budget, for tests and for an operator looking at Redis. */
  key(name: 'log' | 'fg' | 'bg' | 'seq' | 'pace' | 'block' | 'remaining' | `spend:${string}`): string {
    return `${this.#base}:${name}`;
  }

  async reserve(caller: Caller): Promise<number> {
    const now = Math.floor(this.#now());
    const { intervalMs, toleranceMs } = pacingOf(this.options);
    const wait = await this.#shared(now, () =>
      this.#redis.gatewayBudgetReserve(
        this.key('log'),
        this.key('seq'),
        this.key('pace'),
        this.key('block'),
        this.key('remaining'),
        this.#spendKey(now),
        this.key('fg'),
        this.key('bg'),
        now,
        priorityOf(caller),
        caller,
        this.options.backgroundPerMinute,
        this.options.reserve,
        intervalMs,
        toleranceMs,
        WINDOW_MS,
        KEEP_MS,
        (SPEND_RETENTION_MINUTES + 1) * WINDOW_MS,
        this.options.keyPerMinute,
        this.options.backgroundReserved,
      ),
    );
    if (wait !== null) return Number(wait);
    const own = await this.#fallback.reserve(caller);
    // Foreground goes whatever the fallback says; asking it still counts the call in this process's
    // log, so that its background calls leave room for checkout's.
    return priorityOf(caller) === 'foreground' ? 0 : own;
  }

  async observe(remaining: number | null, retryAfterSeconds: number | null): Promise<void> {
    // The fallback hears every answer too, so that it knows the key's state when Redis goes away.
    await this.#fallback.observe(remaining, retryAfterSeconds);
    if (remaining === null && retryAfterSeconds === null) return;
    const now = Math.floor(this.#now());
    await this.#shared(now, () =>
      this.#redis.gatewayBudgetObserve(
        this.key('block'),
        this.key('remaining'),
        now,
        remaining ?? '',
        retryAfterSeconds ?? '',
        WINDOW_MS,
        KEEP_MS,
      ),
    );
  }

  async spending(minutes: number): Promise<SpendRow[]> {
    const starts = minuteStarts(Math.floor(this.#now()), minutes);
    if (starts.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const start of starts) pipeline.hgetall(this.#spendKey(start));
    const results = (await pipeline.exec()) ?? [];
    return starts.map((start, i) => {
      const [error, hash] = results[i] ?? [new Error('no answer'), null];
      if (error) throw error;
      const counts: Record<string, number> = {};
      for (const [caller, n] of Object.entries((hash ?? {}) as Record<string, string>))
        counts[caller] = Number(n);
      return spendRow(start, counts);
    });
  }

  async lastRemaining(): Promise<number | null> {
    const [value, at] = await this.#redis.hmget(this.key('remaining'), 'value', 'at');
    if (value === null || at === null) return null;
    return lastRemainingOf({ value: Number(value), seenAt: Number(at) }, Math.floor(this.#now()));
  }

  #spendKey(now: number): string {
    const minute = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    return this.key(`spend:${new Date(minute).toISOString()}`);
  }

  /** The script's answer, or null when Redis failed or was too slow (and is then left alone a while). */
  async #shared<T>(now: number, call: () => Promise<T>): Promise<T | null> {
    if (now < this.#redisDownUntil) return null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.#timeoutMs);
      timer.unref();
    });
    const answer = Promise.resolve()
      .then(call)
      .catch(() => null);
    try {
      const result = await Promise.race([answer, late]);
      if (result === null) this.#redisDownUntil = now + this.#retryRedisAfterMs;
      return result;
    } finally {
      clearTimeout(timer);
    }
  }
}
