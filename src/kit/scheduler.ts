import { type CronJob, Scheduler } from '../merchant/jobs/scheduler.js';
import type { RandomSource } from '../shared/ids.js';
import type { Adapters } from './adapters.js';
import { JOB_TIMING, type JobName, type Jobs } from './jobs.js';
import type { Shutdown } from './shutdown.js';

/** Each job's schedule can be changed or turned off (null) by the caller. */
export type Schedules = Partial<Record<JobName, string | null>>;

/** The cron jobs: what each runs, under a Redis lock so that one instance runs it at a time. */
export function cronJobs(jobs: Jobs, schedules: Schedules = {}): CronJob[] {
  return (Object.keys(JOB_TIMING) as JobName[]).map((name) => ({
    name,
    schedule: schedules[name] === undefined ? JOB_TIMING[name].schedule : schedules[name],
    lockMs: JOB_TIMING[name].lockMs,
    run: jobs.work[name],
  }));
}

/** The `scheduler` role. A stop lets no new run start and waits for those in hand. */
export function startScheduler(
  a: Adapters,
  jobs: Jobs,
  shutdown: Shutdown,
  random: RandomSource,
  schedules?: Schedules,
): void {
  const scheduler = new Scheduler(a.redis, a.logger, a.redisPrefix, random);
  scheduler.start(cronJobs(jobs, schedules));
  shutdown.work({ name: 'cron', drain: () => scheduler.stop() });
}
