import type { Redis } from 'ioredis';
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import { gatewayNotAnswering } from '../../client/errors.js';
import { databaseUnavailable } from '../../infra/database.js';
import { OutageLog } from '../../infra/outage-log.js';
import { withLock } from '../../infra/redis.js';
import { type Clock, systemClock } from '../../shared/clock.js';
import { cryptoRandom, type RandomSource } from '../../shared/ids.js';

export interface CronJob {
  name: string;
  /** node-cron expression, seconds first; null: not scheduled. */
  schedule: string | null;
  /** The work; the callback only takes the lock and calls this (DESIGN.md: cron decides nothing). */
  run: () => Promise<unknown>;
  lockMs: number;
}

/**
 * Runs each job on one instance at a time (a Redis lock), never two runs of one job at once in this
 * process, and lets a stop wait for the runs in hand.
 */
export class Scheduler {
  readonly #tasks: ScheduledTask[] = [];
  readonly #running = new Set<Promise<unknown>>();
  /** Ticks whose lock could not be taken (Redis down): a line when it starts, one a minute, one when over. */
  readonly #locks: OutageLog;
  /**
   * Runs the database or the gateway did not answer: the same, rather than an error a tick. Only a job
   * that failed on one going through says it answers again (another may not use it: the health check
   * reads no table, the sweeper asks no gateway).
   */
  readonly #outages: { is: (error: Error) => boolean; log: OutageLog; failedJobs: Set<string> }[];

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly lockPrefix: string,
    /** Makes each run's lock token. Default: crypto. */
    private readonly random: RandomSource = cryptoRandom,
    /** Paces the lines of an outage. Default: real time. */
    clock: Clock = systemClock,
  ) {
    this.#locks = new OutageLog(logger, clock, {
      down: 'cron jobs not run: their locks are in redis, which is unavailable',
      stillDown: 'cron jobs still not run: redis unavailable',
      back: 'cron jobs run again',
    });
    const outage = (is: (error: Error) => boolean, what: string, back: string) => ({
      is,
      log: new OutageLog(logger, clock, {
        down: `cron jobs failed: ${what}`,
        stillDown: `cron jobs still failing: ${what}`,
        back: `cron jobs: ${back}`,
      }),
      failedJobs: new Set<string>(),
    });
    this.#outages = [
      outage(databaseUnavailable, 'the database is unavailable', 'the database answers again'),
      outage(gatewayNotAnswering, 'the gateway does not answer', 'the gateway answers again'),
    ];
  }

  start(jobs: CronJob[]): void {
    for (const job of jobs) {
      if (job.schedule === null) continue;
      let busy = false;
      const task = cron.createTask(job.schedule, async () => {
        if (busy) return;
        busy = true;
        let locked = false; // whether the tick reached the job: a failure before is the lock's, Redis's
        // Logged inside the lock: the line's time minus `ms` is when this instance took the job, so the
        // lines of every instance show each job's runs one after another, never overlapping.
        const timed = async () => {
          locked = true;
          const started = performance.now();
          const result = await job.run();
          const ms = Math.round(performance.now() - started);
          this.logger.debug({ job: job.name, ms, result }, 'cron job ran');
          return result;
        };
        const run = runLocked(this.redis, this.lockPrefix, { ...job, run: timed }, this.random)
          .then((result) => this.#went(job.name, locked, result))
          .catch((error: Error) => this.#failed(job.name, locked, error))
          .finally(() => {
            busy = false;
            this.#running.delete(run);
          });
        this.#running.add(run);
        await run;
      });
      task.start();
      this.#tasks.push(task);
    }
  }

  /** A tick that went through: it ran here (`locked`), or another instance holds the job (null). */
  #went(job: string, locked: boolean, result: unknown): void {
    this.#locks.available();
    for (const { log, failedJobs } of this.#outages)
      if (locked && failedJobs.has(job)) {
        failedJobs.clear();
        log.available();
      }
    if (result === null) this.logger.debug({ job }, 'cron job left to the instance holding its lock');
  }

  /** A tick that failed: before its job (the lock: Redis), on the database or the gateway, or in the job itself. */
  #failed(job: string, locked: boolean, error: Error): void {
    if (!locked) {
      this.#locks.failed(error, { job });
      return;
    }
    this.#locks.available();
    const outage = this.#outages.find((o) => o.is(error));
    if (outage) {
      outage.failedJobs.add(job);
      outage.log.failed(error, { job });
      return;
    }
    this.logger.error({ job, err: { message: error.message } }, 'cron job failed');
  }

  async stop(): Promise<void> {
    for (const task of this.#tasks) await task.stop();
    await Promise.all([...this.#running]);
  }
}

/**
 * Runs a job now as the scheduler does, under its lock (`<prefix>:lock:<name>`); null when another
 * instance holds it. What tests and an operator's "run it now" call too.
 */
export function runLocked<T>(
  redis: Redis,
  prefix: string,
  job: { name: string; lockMs: number; run: () => Promise<T> },
  random: RandomSource = cryptoRandom,
): Promise<T | null> {
  return withLock(redis, `${prefix}:lock:${job.name}`, job.lockMs, job.run, random);
}
