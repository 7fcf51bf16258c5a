import { Redis } from 'ioredis';
import { waitFor } from '../test/support/process.js';
import type { Duplicates } from './duplicates.js';
import type { GatewayReader } from './gateway.js';
import type { KitProcesses } from './kit.js';
import type { Random } from './random.js';
import type { RedisLossTimes } from './redis-loss.js';
import { type MariaDb, type PrivateRedis, restart } from './services.js';
import type { KitTables } from './tables.js';

/**
 * The faults, one function each, run in sequence while the payments and the duplicates flow. Each
 * returns a line saying what it did, for the report.
 */

export interface FaultDeps {
  kit: KitProcesses;
  db: MariaDb;
  redis: PrivateRedis;
  tables: KitTables;
  reader: GatewayReader;
  duplicates: Duplicates;
  /** How long after each Redis fault the events it held unapplied took to be applied (issue 44). */
  redisLoss: RedisLossTimes;
  /** The merchants the kit acts for (one: a kit of one merchant). */
  merchants: readonly number[];
  /** The run's seeded random (which merchant's secret is rotated). */
  random: Random;
  /** The merchants whose secret the rotation fault rotated, in order. */
  rotated: number[];
}

export interface Fault {
  name: string;
  run(deps: FaultDeps): Promise<string>;
}

/** How long a restarted service stays down: long enough for every process to notice. */
const DOWN_MS = 3000;
const MID_JOB_MS = 30_000;

/** SIGKILL the worker while it holds a job (bull's active list is not empty), then start a new one. */
const killWorker: Fault = {
  name: 'worker SIGKILLed mid-job, restarted',
  run: async ({ kit, redis }) => {
    const active = await activeJobs(redis.url, `${kit.redisPrefix}:observations:active`);
    await kit.killWorker();
    await kit.startWorker();
    return `killed holding ${active} job(s); a new worker is up`;
  },
};

/** Waits (bounded) until the worker holds a job: the length of bull's active list, probed closely. */
async function activeJobs(url: string, key: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await waitFor('the worker holding a job', () => client.llen(key), MID_JOB_MS, { everyMs: 2 });
  } finally {
    client.disconnect();
  }
}

// Each Redis fault waits until the events the kit held unapplied are applied: timed alone, not
// beside the next fault.
const flushRedis: Fault = {
  name: 'Redis FLUSHALL',
  run: async ({ redis, tables, redisLoss }) => {
    const at = Date.now();
    await redis.flushAll();
    const applied = await redisLoss.measure(tables, 'FLUSHALL', at);
    return `every key gone: the queue, its jobs, the locks, the budget; ${applied}`;
  },
};

const restartRedis: Fault = {
  name: 'Redis restarted (no persistence: empty again)',
  run: async ({ redis, tables, redisLoss }) => {
    await restart(redis, DOWN_MS);
    const applied = await redisLoss.measure(tables, 'restart', Date.now());
    return `down ${DOWN_MS / 1000} s, back empty; ${applied}`;
  },
};

const restartMariaDb: Fault = {
  name: 'MariaDB restarted',
  run: async ({ db }) => {
    await restart(db, DOWN_MS);
    return `stopped (start-stop-daemon --stop), down ${DOWN_MS / 1000} s, started as .ci/run starts it`;
  },
};

/**
 * One merchant's signing secret rotated (the only one of a kit of one merchant; in platform mode one
 * picked at random): its copies are signed with the new one from then on, the others' as before.
 */
const rotateSecret: Fault = {
  name: 'webhook secret rotated mid-stream',
  run: async ({ kit, tables, duplicates, merchants, random, rotated }) => {
    const merchant = merchants[Math.floor(random() * merchants.length)]!;
    const several = merchants.length > 1;
    await kit.rotateSecret(several ? merchant : undefined);
    rotated.push(merchant);
    const served = { merchant, served: merchants };
    duplicates.useSecret(merchant, await tables.signingSecret(kit.encryptionKey, served));
    return several
      ? `\`npm run cli -- webhook rotate --merchant ${merchant}\`; ${merchant}'s copies signed with its new secret from now on, the other merchants' as before`
      : '`npm run cli -- webhook rotate`; copies signed with the new secret from now on';
  },
};

/**
 * The sandbox refuses every delivery for `seconds` of its clock; returns once the outage is over. The
 * run never moves the sandbox's clock on: the worker and the scheduler, pointed at it as at any
 * gateway, keep real time, and a sandbox ahead of them would only delay their sweeps and polls.
 */
export function outage(seconds: number): Fault {
  return {
    name: `receiver cut off: a ${seconds} s sandbox outage`,
    run: async ({ reader, duplicates }) => {
      const window = await reader.outage(seconds);
      duplicates.cutOff(window);
      await waitFor('the outage over', () => Date.now() >= window.until, seconds * 1000 + 5000, {
        everyMs: 200,
      });
      return `deliveries refused from ${iso(window.from)} to ${iso(window.until)}; events of it duplicated only once the kit has them`;
    },
  };
}

const iso = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/** In the order the issue lists them; the outage last, so convergence is measured from its end. */
export const FAULTS: readonly Fault[] = [killWorker, flushRedis, restartRedis, restartMariaDb, rotateSecret];
