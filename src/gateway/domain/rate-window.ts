/**
 * gateway-api.md, Limits; sandbox.md section 2: a fixed window per caller. A request made when
 * `n` or more are already counted is answered after the delay of the largest such `n`; one made
 * when `limit` are counted is refused and not counted.
 */
export interface RatePolicy {
  limit: number;
  windowMs: number;
  /** `[n, seconds]`, ascending by n. */
  slowdown: readonly (readonly [number, number])[];
}

export interface WindowState {
  startedAt: number;
  count: number;
}

export type RateDecision =
  | { allowed: true; delayMs: number; remaining: number; state: WindowState }
  | { allowed: false; retryAfterSeconds: number; remaining: 0; state: WindowState };

export function admit(policy: RatePolicy, previous: WindowState | undefined, now: number): RateDecision {
  const state: WindowState =
    previous && now < previous.startedAt + policy.windowMs ? { ...previous } : { startedAt: now, count: 0 };
  if (state.count >= policy.limit) {
    const retryAfterSeconds = Math.max(1, Math.ceil((state.startedAt + policy.windowMs - now) / 1000));
    return { allowed: false, retryAfterSeconds, remaining: 0, state };
  }
  let delaySeconds = 0;
  for (const [n, seconds] of policy.slowdown) if (state.count >= n) delaySeconds = seconds;
  state.count += 1;
  return {
    allowed: true,
    delayMs: Math.round(delaySeconds * 1000),
    remaining: policy.limit - state.count,
    state,
  };
}

/** What `X-RateLimit-Remaining` says for a caller without counting a request. */
export function remainingOf(policy: RatePolicy, state: WindowState | undefined, now: number): number {
  if (!state || now >= state.startedAt + policy.windowMs) return policy.limit;
  return Math.max(0, policy.limit - state.count);
}

/** Keeps one window per caller; windows that ended are dropped by `prune`. */
export class RateWindows {
  readonly #windows = new Map<string, WindowState>();
  constructor(readonly policy: RatePolicy) {}

  admit(caller: string, now: number): RateDecision {
    const decision = admit(this.policy, this.#windows.get(caller), now);
    this.#windows.set(caller, decision.state);
    return decision;
  }

  remaining(caller: string, now: number): number {
    return remainingOf(this.policy, this.#windows.get(caller), now);
  }

  prune(now: number): void {
    for (const [caller, state] of this.#windows) {
      if (now >= state.startedAt + this.policy.windowMs) this.#windows.delete(caller);
    }
  }
}
