import type { Redis } from 'ioredis';
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import { withLock } from '../../infra/redis.js';
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

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly lockPrefix: string,
    /** Makes each run's lock token. Default: crypto. */
    private readonly random: RandomSource = cryptoRandom,
  ) {}

  start(jobs: CronJob[]): void {
    for (const job of jobs) {
      if (job.schedule === null) continue;
      let busy = false;
      const task = cron.createTask(job.schedule, async () => {
        if (busy) return;
        busy = true;
        // Logged inside the lock: the line's time minus `ms` is when this instance took the job, so the
        // lines of every instance show each job's runs one after another, never overlapping.
        const timed = async () => {
          const started = performance.now();
          const result = await job.run();
          const ms = Math.round(performance.now() - started);
          this.logger.debug({ job: job.name, ms, result }, 'cron job ran');
          return result;
        };
        const run = runLocked(this.redis, this.lockPrefix, { ...job, run: timed }, this.random)
          .then((result) => {
            if (result === null)
              this.logger.debug({ job: job.name }, 'cron job left to the instance holding its lock');
          })
          .catch((error: Error) =>
            this.logger.error({ job: job.name, err: { message: error.message } }, 'cron job failed'),
          )
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
