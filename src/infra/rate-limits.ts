import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../config.js';

/**
 * The public routes' limits (docs/api.md, Limits): each counted per client address or per order; and the
 * wrong operator tokens per client address (the sign-in form's, and every bearer token's).
 */
export const LIMIT_NAMES = [
  'orders_per_address',
  'pay_per_address',
  'pay_per_order',
  'landing_per_address',
  'landing_per_order',
  'payment_methods_per_address',
  'login_failures_per_address',
  'customer_tokens_per_credential',
  'token_failures_per_address',
  'card_lists_per_customer',
  'card_lists_per_address',
] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

export type LimitAnswer = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Takes one request from a limit's count for `key`; a limit that is off always allows. */
export interface Limits {
  take(name: LimitName, key: string): Promise<LimitAnswer>;
  /**
   * Gives back what `take` took, for a limit that counts failures only: taken before the attempt (so
   * that concurrent attempts cannot all slip under it), given back when the attempt succeeds.
   */
  giveBack(name: LimitName, key: string): Promise<void>;
}

/** Every limit off: what a kit built without limits (a test's stub app) runs with. */
export const NO_LIMITS: Limits = { take: async () => ({ allowed: true }), giveBack: async () => {} };

export interface RedisLimitsOptions {
  redis: Redis;
  /** The kit's Redis prefix: keys are `<prefix>:limit:<name>:<key>`. */
  prefix: string;
  rules: Record<LimitName, RateLimit | null>;
  logger: Logger;
  /** Told of each decision taken without Redis (the metric `kit_rate_limit_fallbacks_total`). */
  onFallback?: (name: LimitName) => void;
  /** Told of each refusal (the metric `kit_rate_limited_total`). */
  onRefused?: (name: LimitName) => void;
  /** How long a count waits for Redis before it is taken in this process instead. Default 200 ms. */
  timeoutMs?: number;
  /** After Redis failed, how long to count in this process before asking Redis again. Default 5 s. */
  retryRedisAfterMs?: number;
}

/**
 * The limits, counted in Redis by rate-limiter-flexible (a fixed window per key, one atomic script per
 * request) so that every api process shares one count. When Redis fails or is slower than `timeoutMs`,
 * the same limits are counted in this process alone until it answers again: checkout goes on, each
 * process allowing up to the limit by itself, and the switch is logged (a warning, then a line when
 * Redis is back) and counted by `onFallback`. Neither open to anyone nor closed to everyone.
 */
export class RedisLimits implements Limits {
  readonly #shared = new Map<LimitName, RateLimiterRedis>();
  readonly #own = new Map<LimitName, RateLimiterMemory>();
  readonly #o: RedisLimitsOptions;
  readonly #timeoutMs: number;
  readonly #retryRedisAfterMs: number;
  #redisDownUntil = Number.NEGATIVE_INFINITY;
  #fallingBack = false;

  constructor(o: RedisLimitsOptions) {
    this.#o = o;
    this.#timeoutMs = o.timeoutMs ?? 200;
    this.#retryRedisAfterMs = o.retryRedisAfterMs ?? 5_000;
    for (const name of LIMIT_NAMES) {
      const rule = o.rules[name];
      if (!rule) continue;
      const common = { keyPrefix: `${o.prefix}:limit:${name}`, points: rule.count, duration: rule.seconds };
      this.#shared.set(
        name,
        new RateLimiterRedis({
          ...common,
          // While the connection is being made or remade, commands wait in ioredis's queue: the
          // deadline below bounds that wait, and then this process counts alone for a while.
          storeClient: o.redis,
          // A key over its limit is refused from memory for the rest of its window: a flood from one
          // address costs Redis one round trip per process and window, not one per request.
          inMemoryBlockOnConsumed: rule.count + 1,
        }),
      );
      this.#own.set(name, new RateLimiterMemory(common));
    }
  }

  async take(name: LimitName, key: string): Promise<LimitAnswer> {
    const shared = this.#shared.get(name);
    if (!shared) return { allowed: true };
    const answer = Date.now() < this.#redisDownUntil ? null : await this.#consume(shared, key);
    if (answer !== null) {
      if (this.#fallingBack) {
        this.#fallingBack = false;
        this.#o.logger.info('rate limits: Redis answers again; the limits are shared by every process');
      }
      return this.#refused(name, answer);
    }
    if (!this.#fallingBack) {
      this.#fallingBack = true;
      this.#o.logger.warn(
        'rate limits: Redis unavailable; each process counts the limits alone until it answers',
      );
    }
    this.#o.onFallback?.(name);
    return this.#refused(name, await this.#consume(this.#own.get(name)!, key));
  }

  async giveBack(name: LimitName, key: string): Promise<void> {
    const limiter = this.#fallingBack ? this.#own.get(name) : this.#shared.get(name);
    // Best effort: a point not given back costs the key one attempt in this window, nothing more.
    await limiter?.reward(key, 1).catch(() => {});
  }

  #refused(name: LimitName, answer: LimitAnswer | null): LimitAnswer {
    // The process's own count never fails; a null here would be a defect, not a refusal.
    if (answer === null) return { allowed: true };
    if (!answer.allowed) this.#o.onRefused?.(name);
    return answer;
  }

  /** The limiter's answer; null when it failed or did not answer in time (Redis is then left alone a while). */
  async #consume(limiter: RateLimiterRedis | RateLimiterMemory, key: string): Promise<LimitAnswer | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.#timeoutMs);
      timer.unref();
    });
    const counted = limiter.consume(key).then(
      (): LimitAnswer => ({ allowed: true }),
      (rejection: unknown): LimitAnswer | 'failed' =>
        rejection instanceof RateLimiterRes
          ? { allowed: false, retryAfterSeconds: retryAfterOf(rejection.msBeforeNext) }
          : 'failed',
    );
    try {
      const result = await Promise.race([counted, late]);
      if (result === 'late' || result === 'failed') {
        this.#redisDownUntil = Date.now() + this.#retryRedisAfterMs;
        return null;
      }
      return result;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Whole seconds until the window lets the key in again: what `Retry-After` says, at least 1. */
export function retryAfterOf(msBeforeNext: number): number {
  return Math.max(1, Math.ceil(msBeforeNext / 1000));
}
