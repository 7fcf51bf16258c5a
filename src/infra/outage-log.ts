import type { Clock } from '../shared/clock.js';

/** The part of a pino logger an outage log writes to. */
export interface OutageLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** While a service stays down, one line this often: enough to see it last, not a flood. */
export const STILL_DOWN_EVERY_MS = 60_000;

/**
 * The log of a service that fails and comes back (Redis): a line when it goes down, one a minute
 * while it stays down, one when it is back. Its clients report every failed reconnection (ioredis
 * tries every 2 s, and the kit holds several clients), and each cron tick its lock it could not take:
 * logged one by one, that was a few lines a second for as long as an outage lasted.
 */
export class OutageLog {
  #downSince: number | null = null;
  #lastLine = 0;
  #failures = 0;
  #failuresSinceLine = 0;

  constructor(
    private readonly logger: OutageLogger,
    private readonly clock: Clock,
    /** The three lines: when it goes down, while it stays down, when it is back. */
    private readonly lines: { down: string; stillDown: string; back: string },
  ) {}

  /** A line for each state of `service`: "redis unavailable", "redis still unavailable", "redis available again". */
  static of(service: string, logger: OutageLogger, clock: Clock): OutageLog {
    return new OutageLog(logger, clock, {
      down: `${service} unavailable`,
      stillDown: `${service} still unavailable`,
      back: `${service} available again`,
    });
  }

  /** A client of the service failed (a connection refused, reset or lost); `fields` say where. */
  failed(error: Error, fields: object = {}): void {
    const now = this.clock.now();
    this.#failures += 1;
    this.#failuresSinceLine += 1;
    if (this.#downSince === null) {
      this.#downSince = now;
      this.#line(now);
      this.logger.warn({ ...fields, err: { message: error.message } }, this.lines.down);
    } else if (now - this.#lastLine >= STILL_DOWN_EVERY_MS) {
      const failures = this.#failuresSinceLine;
      this.#line(now);
      this.logger.warn(
        { ...fields, err: { message: error.message }, down_s: seconds(now - this.#downSince), failures },
        this.lines.stillDown,
      );
    }
  }

  /** A client of the service (re)connected, or a use of it succeeded. */
  available(): void {
    if (this.#downSince === null) return;
    const now = this.clock.now();
    this.logger.info({ down_s: seconds(now - this.#downSince), failures: this.#failures }, this.lines.back);
    this.#downSince = null;
    this.#failures = 0;
  }

  #line(now: number): void {
    this.#lastLine = now;
    this.#failuresSinceLine = 0;
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
