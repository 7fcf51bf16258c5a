/**
 * A request budget per API key (gateway-api.md, Limits: 1000 a minute, slowdown from 500). Checkout
 * traffic goes first and never waits on the budget; background callers (the poller, recovery) take
 * tokens from a bucket that refills at `backgroundPerMinute` and also hold back while the gateway
 * says fewer than `reserve` requests remain in its window, so together they stay under the slowdown.
 */
export interface BudgetOptions {
  /** Default 400: under the 500-a-minute slowdown threshold, with room for checkout. */
  backgroundPerMinute: number;
  /** Default 500: what X-RateLimit-Remaining must stay above before background calls go. */
  reserve: number;
}

export const DEFAULT_BUDGET: BudgetOptions = { backgroundPerMinute: 400, reserve: 500 };

export type Priority = 'foreground' | 'background';

/**
 * Who makes a call, for the budget and for what it reports: the shopper's checkout and landings and
 * the operator's commands go first; the poller, recovery, the health check and the CLI's bulk
 * commands are background work.
 */
export type Caller = 'checkout' | 'landing' | 'operator' | 'poller' | 'recovery' | 'health' | 'cli';
export const CALLERS: readonly Caller[] = [
  'checkout',
  'landing',
  'operator',
  'poller',
  'recovery',
  'health',
  'cli',
];

export function priorityOf(caller: Caller): Priority {
  return caller === 'checkout' || caller === 'landing' || caller === 'operator' ? 'foreground' : 'background';
}

export class RateBudget {
  #tokens: number;
  #refilledAt: number;
  #remaining: number | null = null;
  #remainingSeenAt = 0;
  #blockedUntil = 0;

  constructor(
    private readonly now: () => number,
    private readonly options: BudgetOptions = DEFAULT_BUDGET,
  ) {
    this.#tokens = options.backgroundPerMinute / 6; // a ten-second burst at most
    this.#refilledAt = now();
  }

  /** How long a caller of this priority should wait before sending (0: go now); a background call is counted either way. */
  reserve(priority: Priority): number {
    const now = this.now();
    if (now < this.#blockedUntil) return this.#blockedUntil - now;
    if (priority === 'foreground') return 0;
    // The gateway's own count ages out with its window: after a minute it says nothing.
    if (
      this.#remaining !== null &&
      now - this.#remainingSeenAt < 60_000 &&
      this.#remaining <= this.options.reserve
    ) {
      return Math.max(250, 60_000 - (now - this.#remainingSeenAt));
    }
    const perMs = this.options.backgroundPerMinute / 60_000;
    this.#tokens = Math.min(
      this.options.backgroundPerMinute / 6,
      this.#tokens + (now - this.#refilledAt) * perMs,
    );
    this.#refilledAt = now;
    // Counted now even when it must wait: the caller sends once the wait is over without asking again,
    // so a wait handed out is a token spent (a negative balance is the queue of callers waiting).
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil(-this.#tokens / perMs);
  }

  /** What every answer says: `X-RateLimit-Remaining`, and `Retry-After` on a 429. */
  observe(remaining: number | null, retryAfterSeconds: number | null): void {
    const now = this.now();
    if (remaining !== null) {
      this.#remaining = remaining;
      this.#remainingSeenAt = now;
    }
    if (retryAfterSeconds !== null)
      this.#blockedUntil = Math.max(this.#blockedUntil, now + retryAfterSeconds * 1000);
  }
}
