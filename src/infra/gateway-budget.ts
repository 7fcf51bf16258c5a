import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  type Budget,
  type BudgetOptions,
  type BudgetReport,
  type Caller,
  DEFAULT_BUDGET,
  lastRemainingOf,
  MERCHANT_COUNT,
  MemoryBudget,
  merchantOf,
  merchantSharesOf,
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
 *
 * With two or more merchants, KEYS[9..] are each merchant's own foreground and background sets in
 * turn (`byMerchant` of the state: the same members as in the log), so the key count varies: it comes
 * first in the call.
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
-- The caller's merchant: its place among the merchants (0: nobody's), each one's foreground and
-- background share, and the spend field that counts its calls.
local own, fgShare, bgShare, ownCount = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15]), ARGV[16]
local merchants = (#KEYS - 8) / 2
local function merchantKey(i, inBackground)
  if inBackground then return KEYS[8 + 2 * i] end
  return KEYS[7 + 2 * i]
end
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
-- held: the merchants' sets of one priority with their share, all of them or all but the caller's.
local function held(inBackground, all)
  local list = {}
  local share = fgShare
  if inBackground then share = bgShare end
  for i = 1, merchants do
    if all or i ~= own then list[#list + 1] = { merchantKey(i, inBackground), share } end
  end
  return list
end
-- roomLeaving: room over the set less each held merchant's newest share of calls, against n less the shares.
local function roomLeaving(set, holding, n)
  local shares, skip, skipped = 0, {}, 0
  for _, h in ipairs(holding) do
    shares = shares + h[2]
    if h[2] > 0 then
      for _, member in ipairs(redis.call('ZRANGE', h[1], -h[2], -1)) do
        skip[member] = true
        skipped = skipped + 1
      end
    end
  end
  local left = n - shares
  if left <= 0 then return math.huge end
  local count = redis.call('ZCARD', set) - skipped
  if count < left then return 0 end
  -- The (count - left)th of the calls left, counted from 0, oldest first: among the first that many
  -- of the set and those skipped.
  local calls = redis.call('ZRANGE', set, 0, count - left + skipped, 'WITHSCORES')
  local at = 0
  for i = 1, #calls, 2 do
    if not skip[calls[i]] then
      if at == count - left then return tonumber(calls[i + 1]) + window - now end
      at = at + 1
    end
  end
  return math.huge
end

redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', fg, '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', bg, '-inf', now - window)
for i = 9, #KEYS do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window) end
local wait = math.max(0, tonumber(redis.call('GET', block) or '0') - now)
local all = room(log, keyLimit)
local from = 0
if background then
  local others = held(true, false)
  local ownPart = math.huge
  if own > 0 then ownPart = room(merchantKey(own, true), bgShare) end
  local ownShare = math.max(all, math.min(ownPart, roomLeaving(bg, others, reserved)))
  local quiet = roomLeaving(log, others, limit)
  local seen = redis.call('HMGET', remaining, 'value', 'at')
  if seen[1] and seen[2] then
    local value, at = tonumber(seen[1]), tonumber(seen[2])
    if now - at < window and value <= reserve then quiet = math.max(quiet, at + window - now) end
  end
  wait = math.max(wait, math.min(ownShare, quiet))
  from = math.max(tonumber(redis.call('GET', pace) or '0'), now)
  wait = math.max(wait, from + interval - tolerance - now)
else
  local others = held(false, false)
  local keyHeld = held(false, false)
  for _, h in ipairs(held(true, true)) do keyHeld[#keyHeld + 1] = h end
  wait = math.max(wait, all, roomLeaving(log, keyHeld, keyLimit), roomLeaving(fg, others, keyLimit - reserved))
end
if wait > 0 then
  redis.call('HINCRBY', spend, caller .. ':waited', 1)
  redis.call('PEXPIRE', spend, spendTtl)
  return wait
end

local member = ms(now) .. ':' .. redis.call('INCR', seq)
local mine = fg
if background then mine = bg end
redis.call('ZADD', log, ms(now), member)
redis.call('ZADD', mine, ms(now), member)
redis.call('PEXPIRE', log, window + keep)
redis.call('PEXPIRE', mine, window + keep)
redis.call('PEXPIRE', seq, window + keep)
if own > 0 then
  local merchant = merchantKey(own, background)
  redis.call('ZADD', merchant, ms(now), member)
  redis.call('PEXPIRE', merchant, window + keep)
  redis.call('HINCRBY', spend, ownCount, 1)
end
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
    if (!redis.gatewayBudgetReserve) redis.defineCommand('gatewayBudgetReserve', { lua: RESERVE });
    if (!redis.gatewayBudgetObserve)
      redis.defineCommand('gatewayBudgetObserve', { numberOfKeys: 2, lua: OBSERVE });
    this.#redis = redis as Redis & BudgetCommands;
  }

  /** The Redis keys of this budget, for tests and for an operator looking at Redis. */
  key(
    name:
      | 'log'
      | 'fg'
      | 'bg'
      | 'seq'
      | 'pace'
      | 'block'
      | 'remaining'
      | `spend:${string}`
      | `merchant:${string}:${'fg' | 'bg'}`,
  ): string {
    return `${this.#base}:${name}`;
  }

  async reserve(caller: Caller, merchant?: string): Promise<number> {
    const now = Math.floor(this.#now());
    const { intervalMs, toleranceMs } = pacingOf(this.options);
    const shares = merchantSharesOf(this.options);
    const own = merchantOf(this.options, merchant);
    const merchantKeys = shares.merchants.flatMap((m) => [
      this.key(`merchant:${m}:fg`),
      this.key(`merchant:${m}:bg`),
    ]);
    const wait = await this.#shared(now, () =>
      this.#redis.gatewayBudgetReserve(
        8 + merchantKeys.length,
        this.key('log'),
        this.key('seq'),
        this.key('pace'),
        this.key('block'),
        this.key('remaining'),
        this.#spendKey(now),
        this.key('fg'),
        this.key('bg'),
        ...merchantKeys,
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
        own === undefined ? 0 : shares.merchants.indexOf(own) + 1,
        shares.foreground,
        shares.background,
        own === undefined ? '' : `${MERCHANT_COUNT}${own}`,
      ),
    );
    if (wait !== null) return Number(wait);
    const fallback = await this.#fallback.reserve(caller, merchant);
    // Foreground goes whatever the fallback says; asking it still counts the call in this process's
    // log, so that its background calls leave room for checkout's.
    return priorityOf(caller) === 'foreground' ? 0 : fallback;
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
