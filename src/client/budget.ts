/**
 * The request budget of one API key (gateway-api.md, Limits: 1000 a minute, every answer slowed from
 * 500 counted in the gateway's window). Two shares of one minute: checkout traffic (checkout, the
 * landings, operators) and background work (poller, recovery, health, the CLI, the report's refresh).
 * Each has a part the other cannot take, so a checkout burst cannot starve background work nor the
 * other way round, and together they stay under the kit's ceiling for the key, below the gateway's 1000.
 *
 * In platform mode one partner key acts for several linked merchants, and they all share its limit
 * (gateway-api.md, Authentication). Inside each share, each merchant then has a part of its own that the
 * other merchants cannot take (`merchants`, and `decide` for the rule): one merchant's burst of polls or
 * checkouts cannot leave another's shopper waiting.
 *
 * The policy is one pure function, `decide`, over plain state. `MemoryBudget` runs it for one process;
 * the Redis budget (src/infra/gateway-budget.ts) runs the same steps in a Lua script, so every process
 * using the key spends from one budget.
 */
export interface BudgetOptions {
  /**
   * Default 400: background calls go while fewer calls (of any caller) than this were admitted in the
   * last minute, or while they are within their reserved share (`backgroundReserved`).
   */
  backgroundPerMinute: number;
  /** Default 500: beyond its reserved share, background goes only while the gateway's last X-RateLimit-Remaining is above this. */
  reserve: number;
  /**
   * Default 900: the kit's ceiling for every call of the key in a minute (the gateway refuses from
   * 1000). Checkout traffic goes while the minute holds fewer calls than this, and fewer checkout calls
   * than this less `backgroundReserved`.
   */
  keyPerMinute: number;
  /**
   * Default 100: background calls a minute that checkout traffic can never take. Within this share
   * background goes whatever checkout spends (a Retry-After block and the pacing still apply).
   */
  backgroundReserved: number;
  /**
   * Default none: the merchants behind a partner key (their gateway merchant ids, as text), each
   * given a part of both shares that calls of the other merchants can never take. With fewer than
   * two there is no one to be fair to, and a call's merchant changes nothing.
   */
  merchants?: readonly string[];
}

export const DEFAULT_BUDGET: BudgetOptions = {
  backgroundPerMinute: 400,
  reserve: 500,
  keyPerMinute: 900,
  backgroundReserved: 100,
};

/** gateway-api.md, Limits: the gateway counts a 60-second window per key. */
export const WINDOW_MS = 60_000;

export type Priority = 'foreground' | 'background';

/**
 * Who makes a call, for the budget and for what it reports: the shopper's checkout and landings and
 * the operator's commands go first; the poller, recovery, the health check, the report's refresh and the CLI's bulk
 * commands are background work.
 */
export type Caller =
  | 'checkout'
  | 'landing'
  | 'operator'
  | 'poller'
  | 'recovery'
  | 'health'
  | 'cli'
  | 'report';
export const CALLERS: readonly Caller[] = [
  'checkout',
  'landing',
  'operator',
  'poller',
  'recovery',
  'health',
  'cli',
  'report',
];

export function priorityOf(caller: Caller): Priority {
  return caller === 'checkout' || caller === 'landing' || caller === 'operator' ? 'foreground' : 'background';
}

/**
 * What the Requester asks before every attempt and tells after every answer. Neither method rejects:
 * a budget that cannot reach its store decides without it.
 */
export interface Budget {
  /**
   * 0: send now (the call is counted). n > 0: sleep n ms and ask again (nothing was counted).
   * `merchant`: whom the call is for, with a partner key (the gateway merchant id as text); a call
   * for none of the configured merchants, or for none at all, is nobody's and has only the room the
   * merchants share.
   */
  reserve(caller: Caller, merchant?: string): Promise<number>;
  /** What every answer says: `X-RateLimit-Remaining`, and `Retry-After` of a 429 that holds back the whole key. */
  observe(remaining: number | null, retryAfterSeconds: number | null): Promise<void>;
}

export interface SpendRow {
  /** Start of the minute, ISO 8601. */
  minute: string;
  byCaller: Partial<Record<Caller, number>>;
  total: number;
  /** How many times each caller was told to wait in that minute (checkout: only past its share). */
  waited: Partial<Record<Caller, number>>;
  /** With two or more merchants configured: the admitted calls of each (of any caller) that had any. */
  byMerchant?: Record<string, number>;
}

/** What a budget can tell an operator: admitted calls per caller and minute, and the gateway's last count. */
export interface BudgetReport {
  /** The last `minutes` minutes (at most `SPEND_RETENTION_MINUTES`), oldest first, the current one included. */
  spending(minutes: number): Promise<SpendRow[]>;
  /** The gateway's last X-RateLimit-Remaining, or null when none was seen in the last minute. */
  lastRemaining(): Promise<number | null>;
}

/** How long admitted calls are counted per minute: three hours. */
export const SPEND_RETENTION_MINUTES = 180;

/** The state `decide` reads and returns. Times are integer milliseconds. */
export interface BudgetState {
  /** When the calls admitted within the last window were admitted (every caller), ascending. */
  log: readonly number[];
  /** The same, checkout traffic's calls only (foreground). */
  foreground: readonly number[];
  /** The same, background calls only. */
  background: readonly number[];
  /** Background pacing (a generic cell rate algorithm): when the next background call is due; 0 at first. */
  paceAt: number;
  /** A 429 of the whole key holds every caller back until then; 0: no block. */
  blockedUntil: number;
  remaining: { value: number; seenAt: number } | null;
  /**
   * With two or more merchants configured: the same per merchant, each configured merchant's own
   * foreground and background calls (also in `log` and their priority's log).
   */
  byMerchant?: Readonly<Record<string, MerchantLogs>>;
}

/** One merchant's admitted calls within the last window, by priority, ascending. */
export type MerchantLogs = Readonly<Record<Priority, readonly number[]>>;

export const EMPTY_BUDGET: BudgetState = {
  log: [],
  foreground: [],
  background: [],
  paceAt: 0,
  blockedUntil: 0,
  remaining: null,
};

/**
 * Background calls are spaced `intervalMs` apart, with `toleranceMs` of credit so that a burst of about
 * a sixth of a minute's worth may go at once. Whole milliseconds, so that every step of `decide` is
 * exact in JavaScript and in Lua alike (both compute in doubles).
 */
export function pacingOf(options: BudgetOptions): { intervalMs: number; toleranceMs: number } {
  const intervalMs = Math.ceil(WINDOW_MS / options.backgroundPerMinute);
  const burst = Math.max(1, Math.floor(options.backgroundPerMinute / 6));
  return { intervalMs, toleranceMs: burst * intervalMs };
}

/**
 * What each configured merchant keeps of each share: none with fewer than two merchants. Each gets an
 * even part of half of what its share always has, whatever the other share does: checkout traffic
 * `keyPerMinute - backgroundPerMinute`, background `backgroundReserved`. Not of the share's ceiling:
 * the other share can take room up to that ceiling, and a part it can take is no guarantee (merchant
 * A's polls would take back what B's checkout was promised). The other half is shared first come, so
 * that one busy merchant still has most of the minute while the others are quiet.
 */
export function merchantSharesOf(options: BudgetOptions): {
  merchants: readonly string[];
  foreground: number;
  background: number;
} {
  const merchants = [...new Set(options.merchants ?? [])];
  const n = merchants.length;
  if (n < 2) return { merchants: [], foreground: 0, background: 0 };
  return {
    merchants,
    foreground: Math.floor(Math.max(0, options.keyPerMinute - options.backgroundPerMinute) / (2 * n)),
    background: Math.floor(Math.max(0, options.backgroundReserved) / (2 * n)),
  };
}

/** The merchant a call counts for: one of the configured merchants, or none. */
export function merchantOf(options: BudgetOptions, merchant: string | undefined): string | undefined {
  return merchant !== undefined && merchantSharesOf(options).merchants.includes(merchant)
    ? merchant
    : undefined;
}

/**
 * The wait until fewer than `limit` of the calls in `log` (ascending, all within the window) remain
 * in it: none while there are fewer already; never, for a limit of 0.
 */
function roomIn(log: readonly number[], limit: number, now: number): number {
  if (limit <= 0) return Number.POSITIVE_INFINITY;
  if (log.length < limit) return 0;
  return log[log.length - limit]! + WINDOW_MS - now;
}

/** Calls a merchant keeps a share of: its own calls (a subset of the log they are held in) and the share. */
interface Held {
  calls: readonly number[];
  share: number;
}

/**
 * `roomIn` with each held share's unused part counted as spent: the wait until the calls of `log`,
 * plus what each merchant in `held` has not used of its share, number fewer than `limit`. A held
 * merchant's calls within its share leave its unused part as they leave the window, so they change
 * nothing: only its calls beyond the share (its oldest) bring the wait nearer, like everyone else's.
 * So this is `roomIn` over the log less each held merchant's newest `share` calls, against the limit
 * less the shares. With nothing held it is `roomIn`.
 */
function roomLeaving(log: readonly number[], held: readonly Held[], limit: number, now: number): number {
  let shares = 0;
  const skip = new Map<number, number>();
  for (const { calls, share } of held) {
    shares += share;
    for (const at of calls.slice(Math.max(0, calls.length - share))) skip.set(at, (skip.get(at) ?? 0) + 1);
  }
  if (skip.size === 0) return roomIn(log, limit - shares, now);
  const rest = log.filter((at) => {
    const n = skip.get(at) ?? 0;
    if (n > 0) skip.set(at, n - 1);
    return n === 0;
  });
  return roomIn(rest, limit - shares, now);
}

/**
 * The policy. No caller goes while a Retry-After block is in force. Then:
 * - checkout traffic (foreground) is admitted while the window holds fewer than `keyPerMinute` calls
 *   and fewer than `keyPerMinute - backgroundReserved` foreground calls: it can never take the
 *   background's reserved share, and background can never take more than `backgroundPerMinute`, so
 *   checkout always has at least `keyPerMinute - backgroundPerMinute` a minute;
 * - a background call is admitted when its pacing slot has come and either it is within the reserved
 *   share (fewer than `backgroundReserved` background calls in the window, fewer than `keyPerMinute`
 *   in all), or the key is quiet: fewer than `backgroundPerMinute` calls of any caller in the window,
 *   and the gateway's last X-RateLimit-Remaining, if seen within the window, above `reserve`.
 *
 * With two or more `merchants`, each has in each share a part of its own (`merchantSharesOf`), and
 * a call (for `merchant`, or for nobody) is admitted only if the counts above still have room when
 * the parts the other merchants have not used yet in the window are counted as already spent: so no
 * call ever takes what another merchant was promised. Checkout traffic also counts every merchant's
 * unused background part against the key's ceiling (background goes within it whatever checkout
 * spends, so checkout must leave room for it); a merchant's background call within its own part goes
 * like one within the reserved share (the key's ceiling, the block and the pacing still apply).
 * Together that keeps, in every window, the foreground calls, the unused foreground parts and the
 * larger of (background calls plus unused background parts) and `backgroundReserved` within
 * `keyPerMinute`, and the background calls and unused background parts within `backgroundPerMinute`:
 * so a merchant within its part always finds room (but for a Retry-After block, its checkout goes at
 * once, its background call at its pacing slot), whatever the other merchants sent. The parts are half of what each share always
 * has, so one busy merchant still has the rest of the minute while the others are quiet.
 *
 * Otherwise the wait is the time until the call would be admitted if nothing else came: each condition
 * only gets better as time passes (a merchant's call that leaves the window within its part hands the
 * part back, so it changes nothing), so a caller that sleeps it is admitted next time unless other
 * calls came first.
 * The Lua script in src/infra/gateway-budget.ts mirrors this step for step: change both together.
 */
export function decide(
  state: BudgetState,
  priority: Priority,
  now: number,
  options: BudgetOptions,
  merchant?: string,
): { wait: number; state: BudgetState } {
  const log = inWindow(state.log, now);
  const foreground = inWindow(state.foreground, now);
  const background = inWindow(state.background, now);
  const shares = merchantSharesOf(options);
  const byMerchant = Object.fromEntries(
    shares.merchants.map((m): [string, MerchantLogs] => {
      const logs =
        state.byMerchant !== undefined && Object.hasOwn(state.byMerchant, m)
          ? state.byMerchant[m]
          : undefined;
      return [
        m,
        {
          foreground: inWindow(logs?.foreground ?? [], now),
          background: inWindow(logs?.background ?? [], now),
        },
      ];
    }),
  );
  const own = merchantOf(options, merchant);
  const held = (of: 'others' | 'all', p: Priority): Held[] =>
    shares.merchants
      .filter((m) => of === 'all' || m !== own)
      .map((m) => ({ calls: byMerchant[m]![p], share: shares[p] }));
  let wait = Math.max(0, state.blockedUntil - now);
  let paceAt = state.paceAt;
  const all = roomIn(log, options.keyPerMinute, now);
  if (priority === 'foreground') {
    const others = held('others', 'foreground');
    wait = Math.max(
      wait,
      all,
      roomLeaving(log, [...others, ...held('all', 'background')], options.keyPerMinute, now),
      roomLeaving(foreground, others, options.keyPerMinute - options.backgroundReserved, now),
    );
  } else {
    const others = held('others', 'background');
    const ownPart =
      own === undefined
        ? Number.POSITIVE_INFINITY
        : roomIn(byMerchant[own]!.background, shares.background, now);
    const ownShare = Math.max(
      all,
      Math.min(ownPart, roomLeaving(background, others, options.backgroundReserved, now)),
    );
    let quiet = roomLeaving(log, others, options.backgroundPerMinute, now);
    // The gateway's own count ages out with its window: a minute-old answer says nothing.
    const seen = state.remaining;
    if (seen !== null && now - seen.seenAt < WINDOW_MS && seen.value <= options.reserve)
      quiet = Math.max(quiet, seen.seenAt + WINDOW_MS - now);
    wait = Math.max(wait, Math.min(ownShare, quiet));
    const { intervalMs, toleranceMs } = pacingOf(options);
    const from = Math.max(state.paceAt, now);
    wait = Math.max(wait, from + intervalMs - toleranceMs - now);
    if (wait === 0) paceAt = from + intervalMs;
  }
  const merchants = shares.merchants.length > 0 ? { byMerchant } : {};
  if (wait > 0) return { wait, state: { ...state, log, foreground, background, ...merchants } };
  if (own !== undefined) {
    const mine = byMerchant[own]!;
    byMerchant[own] = { ...mine, [priority]: admitted(mine[priority], now) };
  }
  return {
    wait: 0,
    state: {
      ...state,
      log: admitted(log, now),
      foreground: priority === 'foreground' ? admitted(foreground, now) : foreground,
      background: priority === 'background' ? admitted(background, now) : background,
      paceAt,
      ...merchants,
    },
  };
}

/** The calls of `log` still in the window: one admitted at or before now - window has left it. */
function inWindow(log: readonly number[], now: number): readonly number[] {
  let gone = 0;
  while (gone < log.length && log[gone]! <= now - WINDOW_MS) gone++;
  return gone === 0 ? log : log.slice(gone);
}

/** `log` with `now` added, kept in order even when another process's clock put later times in it. */
function admitted(log: readonly number[], now: number): number[] {
  let at = log.length;
  while (at > 0 && log[at - 1]! > now) at--;
  return [...log.slice(0, at), now, ...log.slice(at)];
}

/** What an answer changes: the gateway's count, and a block that a shorter Retry-After never shortens. */
export function observed(
  state: BudgetState,
  remaining: number | null,
  retryAfterSeconds: number | null,
  now: number,
): BudgetState {
  return {
    ...state,
    remaining: remaining === null ? state.remaining : { value: remaining, seenAt: now },
    blockedUntil:
      retryAfterSeconds === null
        ? state.blockedUntil
        : Math.max(state.blockedUntil, now + Math.ceil(retryAfterSeconds * 1000)),
  };
}

/** The last X-RateLimit-Remaining while it still says something (seen within the window). */
export function lastRemainingOf(seen: BudgetState['remaining'], now: number): number | null {
  return seen !== null && now - seen.seenAt < WINDOW_MS ? seen.value : null;
}

/** Starts of the last `minutes` minutes, oldest first, the current one included. */
export function minuteStarts(now: number, minutes: number): number[] {
  const count = Math.max(0, Math.min(Math.floor(minutes), SPEND_RETENTION_MINUTES));
  const current = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  return Array.from({ length: count }, (_, i) => current - (count - 1 - i) * WINDOW_MS);
}

/** The count of a merchant's admitted calls in a minute's counts, beside those by caller. */
export const MERCHANT_COUNT = 'merchant:';

/**
 * One row of `spending`, from counts by caller name, `<caller>:waited` and `merchant:<merchant>`
 * (unknown names, from a newer version, are left out).
 */
export function spendRow(start: number, counts: Record<string, number>): SpendRow {
  const byMerchant: Record<string, number> = Object.fromEntries(
    Object.entries(counts)
      .filter(([name, n]) => name.startsWith(MERCHANT_COUNT) && n > 0)
      .map(([name, n]) => [name.slice(MERCHANT_COUNT.length), n]),
  );
  const byCaller: Partial<Record<Caller, number>> = {};
  const waited: Partial<Record<Caller, number>> = {};
  let total = 0;
  for (const caller of CALLERS) {
    const n = counts[caller] ?? 0;
    if (n > 0) {
      byCaller[caller] = n;
      total += n;
    }
    const w = counts[`${caller}:waited`] ?? 0;
    if (w > 0) waited[caller] = w;
  }
  const row: SpendRow = { minute: new Date(start).toISOString(), byCaller, total, waited };
  // Only with merchants configured: a budget of one merchant reports as it always did.
  return Object.keys(byMerchant).length > 0 ? { ...row, byMerchant } : row;
}

/** The budget of one process: the default of a client built without one (tests, a client used alone). */
export class MemoryBudget implements Budget, BudgetReport {
  #state: BudgetState = EMPTY_BUDGET;
  /** Minute start -> admitted calls by caller (and by merchant, `merchant:<merchant>`). */
  readonly #spent = new Map<number, Record<string, number>>();

  constructor(
    private readonly now: () => number,
    readonly options: BudgetOptions = DEFAULT_BUDGET,
  ) {}

  async reserve(caller: Caller, merchant?: string): Promise<number> {
    const now = Math.floor(this.now());
    const { wait, state } = decide(this.#state, priorityOf(caller), now, this.options, merchant);
    this.#state = state;
    this.#count(wait === 0 ? caller : `${caller}:waited`, now);
    const own = merchantOf(this.options, merchant);
    if (wait === 0 && own !== undefined) this.#count(`${MERCHANT_COUNT}${own}`, now);
    return wait;
  }

  async observe(remaining: number | null, retryAfterSeconds: number | null): Promise<void> {
    this.#state = observed(this.#state, remaining, retryAfterSeconds, Math.floor(this.now()));
  }

  async spending(minutes: number): Promise<SpendRow[]> {
    return minuteStarts(Math.floor(this.now()), minutes).map((start) =>
      spendRow(start, this.#spent.get(start) ?? {}),
    );
  }

  async lastRemaining(): Promise<number | null> {
    return lastRemainingOf(this.#state.remaining, Math.floor(this.now()));
  }

  #count(name: string, now: number): void {
    const minute = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    const counts = this.#spent.get(minute) ?? {};
    counts[name] = (counts[name] ?? 0) + 1;
    this.#spent.set(minute, counts);
    for (const start of this.#spent.keys())
      if (start <= minute - SPEND_RETENTION_MINUTES * WINDOW_MS) this.#spent.delete(start);
  }
}
