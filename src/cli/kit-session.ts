import type { Logger } from 'pino';
import type { GatewayClient } from '../client/gateway-client.js';
import type { Gateways } from '../client/merchant-gateways.js';
import type { SandboxControls } from '../client/sandbox-controls.js';
import type { Config } from '../config.js';
import type { AdapterOptions, Adapters } from '../kit/adapters.js';
import type { JobName, Jobs } from '../kit/jobs.js';
import type { KitParts } from '../kit/parts.js';
import type { Shutdown } from '../kit/shutdown.js';
import type { Store } from '../merchant/store/index.js';
import type { Clock } from '../shared/clock.js';
import { cryptoRandom } from '../shared/ids.js';
import { once } from '../shared/once.js';

/**
 * What a CLI command runs with: the kit's own parts (kit/parts.ts, what every process of the kit is
 * built from), beside a running kit and never a second embedded sandbox: without GATEWAY_BASE_URL the
 * gateway is the running kit's, on GATEWAY_PORT. Each is built when the command first asks for it, so
 * a command loads and opens only what it uses; everything opened is closed when it ends.
 */
export interface KitSession {
  readonly config: Config;
  /**
   * The clock the kit runs on (kit-clock.ts), asked once: the store and the key's budget count on it
   * as the kit's processes do. `warn`: what to do with the line saying no kit answered.
   */
  clock(warn?: (line: string) => void): Promise<Clock>;
  /** The database, created if missing and migrated: the migrations applied now. */
  migrate(): Promise<string[]>;
  /**
   * The kit's store: the database migrated first and the encryption key settled as start-up settles
   * it (unless `keyCheck` is false: the command that forgets what a lost key sealed). A database that
   * does not exist is one line, unless the command sets the kit up (`create`: a webhook registered,
   * an operator added, before the kit's first start).
   */
  store(o?: { create?: boolean; keyCheck?: boolean }): Promise<Store>;
  /**
   * The kit's gateway client: each of its calls is admitted by the API key's budget shared through
   * Redis, the one the kit's own processes (its API's checkout among them) spend from.
   */
  gateway(): Promise<GatewayClient>;
  /**
   * The gateway as each merchant sees it (platform mode: a partner key naming the merchant), within
   * the same shared budget.
   */
  gateways(): Promise<Gateways>;
  /** The sandbox's controls, at the gateway's address (sandbox.md section 10). */
  sandboxControls(): Promise<SandboxControls>;
  /** Every adapter, as a process of the kit has them (from the same parts), and the jobs over them. */
  adapters(): Promise<{ adapters: Adapters; jobs: Jobs }>;
}

/**
 * A command's action: `run` gets the session, after the configuration is read (a bad setting is its
 * one line, exit 1). What the session opened is closed after, whatever happens.
 */
export function kitAction<A extends unknown[]>(
  run: (kit: KitSession, ...args: A) => Promise<unknown>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const { configOrExit } = await import('../startup.js');
    const session = openSession(configOrExit());
    try {
      await run(session.kit, ...args);
    } finally {
      await session.close();
    }
  };
}

function openSession(config: Config): { kit: KitSession; close: () => Promise<void> } {
  let opened: Shutdown | undefined;
  const logger = once(async (): Promise<Logger> => {
    const { createLogger, prettyDestination, wantsPrettyLogs } = await import('../infra/logger.js');
    // Warnings only, on stderr: stdout is the command's answer, and a progress bar shares the terminal.
    const isTTY = process.stderr.isTTY === true;
    const pretty = wantsPrettyLogs(config.logFormat, { env: config.env, isTTY });
    return createLogger(
      config.logLevel === 'info' ? 'warn' : config.logLevel,
      pretty ? prettyDestination(2, isTTY) : process.stderr,
    );
  });
  const shutdown = once(async () => {
    const { Shutdown } = await import('../kit/shutdown.js');
    opened = new Shutdown(config.shutdownGraceMs, await logger());
    return opened;
  });
  const clock = once(async (warn?: (line: string) => void) =>
    (await import('./kit-clock.js')).kitClock(config, warn),
  );
  const options = once(async (): Promise<AdapterOptions> => {
    // Read already (configOrExit): imported here so that loading this module loads no schema.
    const { localUrl } = await import('../config.js');
    return {
      config,
      logger: await logger(),
      // No kit answering: nothing to agree with, and the commands that need its gateway say so.
      clock: await clock(),
      random: cryptoRandom,
      redisPrefix: config.redisPrefix,
      publicBaseUrl: config.publicBaseUrl ?? localUrl(config.host, config.port),
      // No `startSandbox`: without GATEWAY_BASE_URL the gateway is the running kit's sandbox.
      // Beside a kit that has run: a database that does not exist is a mistyped name, said, not made.
      createDatabase: false,
    };
  });
  // The kit's parts, loaded when a command first uses one: `--help` and the commands that touch
  // neither the database nor the gateway load none of them.
  const parts = once(
    async (): Promise<KitParts> =>
      (await import('../kit/parts.js')).kitParts(await options(), await shutdown()),
  );
  const adapters = once(async () => {
    const [{ buildAdapters }, { jobsOf }] = await Promise.all([
      import('../kit/adapters.js'),
      import('../kit/jobs.js'),
    ]);
    const built = await buildAdapters(await options(), await shutdown(), await parts());
    return { adapters: built, jobs: jobsOf(built, cryptoRandom) };
  });
  return {
    kit: {
      config,
      clock,
      migrate: async () => (await (await parts()).database({ create: true })).applied,
      store: async ({ create = false, keyCheck = true } = {}) =>
        (await (await parts()).store({ create, settleKeys: keyCheck })).store,
      gateway: async () => (await (await parts()).gateway()).client,
      gateways: async () => (await (await parts()).gateway()).gateways,
      sandboxControls: async () => {
        const [{ SandboxControls }, { gatewayUrl }] = await Promise.all([
          import('../client/sandbox-controls.js'),
          import('../kit/gateway.js'),
        ]);
        return new SandboxControls({ baseUrl: gatewayUrl(config), apiKey: config.gateway.apiKey });
      },
      adapters,
    },
    close: async () => {
      await opened?.stop();
    },
  };
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
