import cron from 'node-cron';

/* The cron jobs a scheduler runs, and JOB_SCHEDULES read: pure, no environment (config.ts reads it). */

/** The scheduler's cron jobs (their work and default schedules: src/kit/jobs.ts). */
export const JOB_NAMES = [
  'sweeper',
  'holds',
  'poller',
  'recovery',
  'health',
  'report',
  'authorizations',
  'retention',
  'idempotency-keys',
  'expiry',
] as const;
export type JobName = (typeof JOB_NAMES)[number];
/** A job's cron expression (seconds first), or null: not run by the scheduler. */
export type JobSchedules = Partial<Record<JobName, string | null>>;

/**
 * JOB_SCHEDULES: `name=expression` pairs separated by `;` (a cron expression has commas of its own),
 * `off` for a job the scheduler should not run: `poller=0,30 * * * * *;report=off`. Returns the
 * schedules, or what is wrong with them.
 */
export function parseJobSchedules(text: string): JobSchedules | string {
  const schedules: JobSchedules = {};
  for (const part of text.split(';').map((p) => p.trim())) {
    if (part === '') continue;
    const at = part.indexOf('=');
    const name = (at < 0 ? part : part.slice(0, at)).trim();
    const expression = at < 0 ? '' : part.slice(at + 1).trim();
    if (!(JOB_NAMES as readonly string[]).includes(name))
      return `"${name}" is not a job (${JOB_NAMES.join(', ')}); write name=expression pairs separated by ;`;
    if (expression !== 'off' && !cron.validate(expression))
      return `${name}: "${expression}" is not a cron expression (seconds first, such as */15 * * * * *) nor off`;
    schedules[name as JobName] = expression === 'off' ? null : expression;
  }
  return schedules;
}
