/** Time as an injected seam: every expiry, window and retry reads `now()` from one of these. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to: tests and the sandbox's `/sandbox/clock/advance`. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(startMs: number = Date.UTC(2026, 10, 1, 12, 0, 0)) {
    this.#ms = startMs;
  }
  now(): number {
    return this.#ms;
  }
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('a clock only moves forward');
    this.#ms += ms;
  }
}

/**
 * A clock that follows real time plus whatever it was advanced by: the standalone sandbox runs on
 * real time and still honours `/sandbox/clock/advance`.
 */
export class OffsetClock implements Clock {
  #offset = 0;
  constructor(private readonly base: Clock = systemClock) {}
  now(): number {
    return this.base.now() + this.#offset;
  }
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('a clock only moves forward');
    this.#offset += ms;
  }
}

export type AdvanceableClock = Clock & { advance(ms: number): void };

/** `2026-11-01T12:00:00.000000Z`: ISO 8601 UTC with microseconds, as gateway-api.md shows timestamps. */
export function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** `isoMicros` of a moment that may not have happened yet (null stays null). */
export function isoMicrosOrNull(ms: number | null): string | null {
  return ms === null ? null : isoMicros(ms);
}

/** `YYYY-MM-DD HH:MM:SS`, the format of card verification records. */
export function sqlDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
