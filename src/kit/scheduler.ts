import { expireHolds } from '../merchant/checkout/card.js';
import { type CronJob, Scheduler } from '../merchant/jobs/scheduler.js';
import { sweepInbox } from '../merchant/jobs/sweeper.js';
import type { RandomSource } from '../shared/ids.js';
import type { Adapters } from './adapters.js';
import type { Shutdown } from './shutdown.js';

/** The cron jobs by name; each one's schedule can be changed or turned off (null) by the caller. */
export type JobName = 'sweeper' | 'holds';
export type Schedules = Partial<Record<JobName, string | null>>;

/** Cron expressions, seconds first. */
const DEFAULT_SCHEDULES: Record<JobName, string> = {
  sweeper: '*/20 * * * * *',
  holds: '0 * * * * *',
};

/** The background jobs: what each runs, under a Redis lock so that one instance runs it at a time. */
export function cronJobs(a: Adapters, schedules: Schedules = {}): CronJob[] {
  const schedule = (name: JobName) =>
    schedules[name] === undefined ? DEFAULT_SCHEDULES[name] : schedules[name];
  return [
    { name: 'sweeper', schedule: schedule('sweeper'), lockMs: 60_000, run: () => sweep(a) },
    { name: 'holds', schedule: schedule('holds'), lockMs: 60_000, run: () => expireHolds(a.checkout) },
  ];
}

/** Inbox events stored but not processed after a minute, queued again. */
export function sweep(a: Adapters): Promise<number> {
  return sweepInbox({ inbox: a.store.inbox, enqueue: a.enqueue, now: a.clock.now() });
}

/** The `scheduler` role. A stop lets no new run start and waits for those in hand. */
export function startScheduler(
  a: Adapters,
  shutdown: Shutdown,
  random: RandomSource,
  schedules?: Schedules,
): void {
  const scheduler = new Scheduler(a.redis, a.logger, a.redisPrefix, random);
  scheduler.start(cronJobs(a, schedules));
  shutdown.work({ name: 'cron', drain: () => scheduler.stop() });
}
