import type { Config } from '../config.js';
import { createLogger } from '../infra/logger.js';
import { type Adapters, buildAdapters } from '../kit/adapters.js';
import { type Jobs, jobsOf } from '../kit/jobs.js';
import { Shutdown } from '../kit/shutdown.js';
import { systemClock } from '../shared/clock.js';
import { cryptoRandom } from '../shared/ids.js';

/**
 * What a CLI command that does the kit's background work runs with: the kit's adapters (database,
 * Redis, the queue, the gateway and its shared budget) beside a running kit, never a second embedded
 * sandbox: without GATEWAY_BASE_URL it talks to the running kit's, on GATEWAY_PORT. Closed after.
 */
export async function withKit<T>(config: Config, fn: (a: Adapters, jobs: Jobs) => Promise<T>): Promise<T> {
  // Warnings only, on stderr: stdout is the command's summary, and a progress bar shares the terminal.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr);
  const shutdown = new Shutdown(config.shutdownGraceMs, logger);
  try {
    const adapters = await buildAdapters(
      {
        config,
        logger,
        clock: systemClock,
        random: cryptoRandom,
        redisPrefix: config.redisPrefix,
        publicBaseUrl: config.publicBaseUrl ?? `http://127.0.0.1:${config.port}`,
        embedded: 'attach',
      },
      shutdown,
    );
    return await fn(adapters, jobsOf(adapters, cryptoRandom));
  } finally {
    await shutdown.stop();
  }
}
