import { type Config, localUrl } from '../config.js';
import { requireDatabase } from '../infra/database.js';
import { createLogger, prettyDestination, wantsPrettyLogs } from '../infra/logger.js';
import { type Adapters, buildAdapters } from '../kit/adapters.js';
import { type JobName, type Jobs, jobsOf } from '../kit/jobs.js';
import { Shutdown } from '../kit/shutdown.js';
import { cryptoRandom } from '../shared/ids.js';
import { kitClock } from './kit-clock.js';

/**
 * What a CLI command that does the kit's background work runs with: the kit's adapters (database,
 * Redis, the queue, the gateway and its shared budget) beside a running kit, never a second embedded
 * sandbox: without GATEWAY_BASE_URL it talks to the running kit's, on GATEWAY_PORT. Closed after.
 */
export async function withKit<T>(config: Config, fn: (a: Adapters, jobs: Jobs) => Promise<T>): Promise<T> {
  // Beside a kit that has run: a database that does not exist is a mistyped name, said, not made.
  await requireDatabase(config.databaseUrl);
  // Warnings only, on stderr: stdout is the command's summary, and a progress bar shares the terminal.
  const isTTY = process.stderr.isTTY === true;
  const pretty = wantsPrettyLogs(config.logFormat, { env: config.env, isTTY });
  const logger = createLogger(
    config.logLevel === 'info' ? 'warn' : config.logLevel,
    pretty ? prettyDestination(2, isTTY) : process.stderr,
  );
  const shutdown = new Shutdown(config.shutdownGraceMs, logger);
  try {
    const adapters = await buildAdapters(
      {
        config,
        logger,
        // No kit answering: nothing to agree with, and the commands that need its gateway say so.
        clock: await kitClock(config),
        random: cryptoRandom,
        redisPrefix: config.redisPrefix,
        publicBaseUrl: config.publicBaseUrl ?? localUrl(config.host, config.port),
        embedded: 'attach',
      },
      shutdown,
    );
    return await fn(adapters, jobsOf(adapters, cryptoRandom));
  } finally {
    await shutdown.stop();
  }
}

/** How long an operator's run waits for the scheduler's run of the same job, and how often it looks. */
const LOCK_WAIT_MS = 2 * 60_000;
const LOCK_RETRY_MS = 500;

/**
 * Runs `work` under the lock of job `name`, as the scheduler runs the job: while another instance
 * holds it (a scheduler's run in hand), says so once on stderr and waits, up to two minutes, so the
 * same work is never done twice at once. Throws a one-line error when the wait is over.
 */
export async function whenLockFree<T>(
  jobs: Jobs,
  name: JobName,
  work: () => Promise<T>,
  o: { waitMs?: number; retryMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<T> {
  const { waitMs = LOCK_WAIT_MS, retryMs = LOCK_RETRY_MS } = o;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // A wrapper, so that a result of null still reads as "ran".
  const run = () => jobs.underLock(name, async () => ({ value: await work() }));
  let ran = await run();
  if (ran === null) {
    console.error(`${name} is running on another instance (its lock is held): waiting for it to finish`);
    for (let waited = 0; ran === null; waited += retryMs) {
      if (waited >= waitMs)
        throw new Error(
          `${name} has been running on another instance for ${waitMs / 1000} s (its lock is held): try again later`,
        );
      await sleep(retryMs);
      ran = await run();
    }
  }
  return ran.value;
}
