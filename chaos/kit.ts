import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SANDBOX_MERCHANT_KEY } from '../src/config.js';
import {
  exitWithin,
  freePort,
  groupAlive,
  healthy,
  type Proc,
  start,
  startNpm,
  waitFor,
} from '../test/support/process.js';
import type { Cleanup } from './cleanup.js';

/**
 * The kit as it runs in production, split by role into real `src/main.ts` processes: `api` (with the
 * embedded sandbox gateway, which delivers the webhooks), `worker` (the one the run kills) and
 * `scheduler` (poller, recovery, health, sweeper: what makes the kit converge after the faults).
 * Or, for the crash points, beside a gateway of its own outside the kit (`KitSettings.gateway`), whose
 * webhook endpoint the CLI registers first, as compose's one-shot does; then it is the api the run
 * kills and starts again.
 */

const READY_MS = 60_000;
const STOP_MS = 15_000;

export interface KitSettings {
  databaseUrl: string;
  redisUrl: string;
  /** When set, each process's output is written there at the end (CHAOS_LOG_DIR). */
  logDir?: string;
  /** The Redis prefix of the queue and the locks; default `chaos`. */
  redisPrefix?: string;
  /** The api's port; default a free one. */
  port?: number;
  /** JOB_SCHEDULES of the scheduler; default the kit's own schedules. */
  jobSchedules?: string;
  /** A gateway outside the kit; unset, the api runs the embedded sandbox and the others use it. */
  gateway?: OutsideGateway;
  /** The embedded sandbox's seed file (GATEWAY_SEED); default the kit's own. */
  sandboxSeed?: string;
  /**
   * The api process runs the worker role too (the queue's worker and the order events' dispatcher),
   * on the embedded sandbox's clock, and no worker process runs apart; default false. A process that
   * reaches the sandbox over HTTP keeps real time, so only a dispatcher beside the sandbox follows its
   * clock when the run moves it on.
   */
  workerInApi?: boolean;
  /** More of the kit's settings, for every process (SHOP_WEBHOOK_URLS, GATEWAY_SANDBOX_STATE, ...). */
  env?: Record<string, string>;
  /** Told at once when a process exits that the run did not stop or kill. */
  onDeath?: (line: string) => void;
  /**
   * Platform mode (issue 45, docs/platform.md): the kit acts for a partner key's linked merchants;
   * unset, for the seed's first merchant with its own key, as a single shop does.
   */
  platform?: PlatformSettings;
}

/** A partner key and the merchants the kit acts for with it, each with its own key. */
export interface PlatformSettings {
  /** GATEWAY_API_KEY: the partner's key. */
  partnerKey: string;
  /** GATEWAY_MERCHANTS, in order (the first is the one orders made before platform mode belong to). */
  merchants: readonly number[];
  /** GATEWAY_MERCHANT_KEYS: each merchant's own key, for 3D Secure, capture, refund and void. */
  merchantKeys: Readonly<Record<number, string>>;
}

/** A gateway the kit reaches over the network, not one it runs (the crash points' standalone sandbox). */
export interface OutsideGateway {
  /** The base URL each caller (`api`, `worker`, `scheduler`, `cli`) is given: the run's proxy tells them apart by it. */
  baseUrlFor(who: string): string;
  /** Where browsers and the gateway reach the api (PUBLIC_BASE_URL); the webhook URL is under it. */
  publicUrl: string;
}

export class KitProcesses {
  readonly apiUrl: string;
  /** The embedded sandbox (without `KitSettings.gateway`). */
  readonly gatewayUrl: string;
  readonly opsToken = `chaos-ops-${randomBytes(12).toString('hex')}`;
  /** APP_ENCRYPTION_KEY: the run reads the stored signing secret with it. */
  readonly encryptionKey = randomBytes(32).toString('base64');
  /** The Redis prefix of the queue and the locks. */
  readonly redisPrefix: string;
  readonly #processes: Proc[] = [];
  readonly #roles = new Map<Proc, string>();
  /** Processes the run itself ended (the killed worker, the CLI, everything at the stop). */
  readonly #ended = new Set<Proc>();
  #worker: Proc | null = null;
  #api: Proc | null = null;

  private constructor(
    private readonly settings: KitSettings,
    private readonly port: number,
    private readonly gatewayPort: number,
  ) {
    this.apiUrl = `http://127.0.0.1:${port}`;
    this.gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    this.redisPrefix = settings.redisPrefix ?? 'chaos';
  }

  /** The api, then a worker and a scheduler beside it; registered with `cleanup` before the first starts. */
  static async start(settings: KitSettings, cleanup: Cleanup): Promise<KitProcesses> {
    const port = settings.port ?? (await freePort());
    const kit = new KitProcesses(settings, port, await freePort([port]));
    const { logDir } = settings;
    if (logDir) cleanup.add(`keep the kit's output in ${logDir}`, () => kit.#keepOutput(logDir)); // after the stop
    cleanup.add('stop the kit', () => kit.#stop());
    if (settings.gateway) await kit.#registerWebhook(settings.gateway);
    await kit.startApi();
    if (!settings.workerInApi) await kit.startWorker();
    await kit.#startRole('scheduler');
    return kit;
  }

  /** What every process of the kit shares. */
  #env(): Record<string, string> {
    return {
      DATABASE_URL: this.settings.databaseUrl,
      REDIS_URL: this.settings.redisUrl,
      REDIS_PREFIX: this.redisPrefix,
      APP_ENCRYPTION_KEY: this.encryptionKey,
      OPS_API_TOKEN: this.opsToken,
      LOG_LEVEL: 'warn',
      // Every shopper of a run comes from one address: the limits per address would refuse the run
      // itself (the storm's full form starts about 80 orders a minute). Those per order stay on.
      LIMIT_ORDERS_PER_ADDRESS: 'off',
      LIMIT_PAY_PER_ADDRESS: 'off',
      ...this.settings.env,
    };
  }

  #track(p: Proc, role: string): Proc {
    this.#processes.push(p);
    this.#roles.set(p, role);
    const { onDeath } = this.settings;
    if (onDeath)
      void p.exited.then(({ code, signal }) => {
        if (!this.#ended.has(p))
          onDeath(`the ${role} process (pid ${p.child.pid}) exited on its own: ${signal ?? `code ${code}`}`);
      });
    return p;
  }

  /**
   * How `who` reaches the gateway: the outside one at its own base URL, or the api's embedded sandbox;
   * with the kit's key (the partner's and its merchants' in platform mode).
   */
  #gatewayEnv(who: string): Record<string, string> {
    const outside = this.settings.gateway;
    return {
      GATEWAY_BASE_URL: outside ? outside.baseUrlFor(who) : this.gatewayUrl,
      ...this.#keyEnv(),
      ...(outside ? { PUBLIC_BASE_URL: outside.publicUrl } : {}),
    };
  }

  /** The kit's gateway key: the first merchant's own, or the partner's with its merchants and their keys. */
  #keyEnv(): Record<string, string> {
    const { platform } = this.settings;
    if (!platform) return { GATEWAY_API_KEY: SANDBOX_MERCHANT_KEY };
    return {
      GATEWAY_API_KEY: platform.partnerKey,
      GATEWAY_MERCHANTS: platform.merchants.join(','),
      GATEWAY_MERCHANT_KEYS: Object.entries(platform.merchantKeys)
        .map(([id, key]) => `${id}=${key}`)
        .join(','),
    };
  }

  /** The api's embedded sandbox: its port, and its seed when the run gives one. */
  #sandboxEnv(): Record<string, string> {
    const { sandboxSeed } = this.settings;
    return { GATEWAY_PORT: String(this.gatewayPort), ...(sandboxSeed ? { GATEWAY_SEED: sandboxSeed } : {}) };
  }

  /** Starts the api (again, on the same port and database, after `killApi`) and waits until it is healthy. */
  async startApi(): Promise<void> {
    const env = {
      ...this.#env(),
      ROLES: this.settings.workerInApi ? 'api,worker' : 'api',
      PORT: String(this.port),
      ...(this.settings.gateway ? this.#gatewayEnv('api') : { ...this.#sandboxEnv(), ...this.#keyEnv() }),
    };
    this.#api = this.#track(start('src/main.ts', [], env), 'api');
    await healthy(this.#api, this.apiUrl, READY_MS);
  }

  /** SIGKILL to the api process; resolves once it is gone. */
  async killApi(): Promise<void> {
    const api = this.#api!;
    this.#ended.add(api);
    api.child.kill('SIGKILL');
    await exitWithin(api, STOP_MS);
  }

  /** A worker or scheduler on the gateway the api uses, as compose runs them. */
  async #startRole(role: 'worker' | 'scheduler'): Promise<Proc> {
    // It serves no API: its own metrics port answering says it is up.
    const metricsPort = await freePort([this.port, this.gatewayPort]);
    const { jobSchedules } = this.settings;
    const env = {
      ...this.#env(),
      ROLES: role,
      ...this.#gatewayEnv(role),
      PORT: String(metricsPort),
      METRICS_PORT: String(metricsPort),
      ...(role === 'scheduler' && jobSchedules ? { JOB_SCHEDULES: jobSchedules } : {}),
    };
    const p = this.#track(start('src/main.ts', [], env), role);
    await metricsAnswer(p, metricsPort, role);
    return p;
  }

  /** Starts a new worker process and waits until it is up. */
  async startWorker(): Promise<void> {
    this.#worker = await this.#startRole('worker');
  }

  /** SIGKILL to the worker process; resolves once it is gone. */
  async killWorker(): Promise<void> {
    const worker = this.#worker!;
    this.#ended.add(worker);
    worker.child.kill('SIGKILL');
    await exitWithin(worker, STOP_MS);
  }

  /**
   * `npm run cli -- webhook rotate` beside the running kit (`--merchant <id>`: that merchant's endpoint,
   * in platform mode); fails unless it exits 0.
   */
  async rotateSecret(merchant?: number): Promise<void> {
    // Without GATEWAY_BASE_URL the CLI attaches to the running kit's sandbox on GATEWAY_PORT, and
    // stores the new secret under the embedded sandbox's label, retiring the one it replaces (the
    // merchant's only).
    const env = { ...this.#env(), ...this.#keyEnv(), GATEWAY_PORT: String(this.gatewayPort) };
    const args = ['run', '-s', 'cli', '--', 'webhook', 'rotate'];
    if (merchant !== undefined) args.push('--merchant', String(merchant));
    const cli = this.#track(startNpm(args, env), 'cli');
    this.#ended.add(cli);
    const { code } = await exitWithin(cli, READY_MS);
    if (code !== 0) throw new Error(`webhook rotate exited ${code}: ${cli.stderr()}`);
  }

  /**
   * `npm run cli -- webhook register --url <public>/webhooks/gateway` against the outside gateway, as
   * compose's one-shot does before the kit starts (it migrates the database and stores the secret).
   */
  async #registerWebhook(gateway: OutsideGateway): Promise<void> {
    const url = `${gateway.publicUrl}/webhooks/gateway`;
    const env = { ...this.#env(), ...this.#gatewayEnv('cli') };
    const args = ['run', '-s', 'cli', '--', 'webhook', 'register', '--url', url];
    const cli = this.#track(startNpm(args, env), 'cli');
    this.#ended.add(cli);
    const { code } = await exitWithin(cli, READY_MS);
    if (code !== 0) throw new Error(`webhook register exited ${code}: ${cli.stderr()}`);
  }

  /** The processes that exited without the run stopping or killing them: role, exit, last stderr. */
  crashed(): string[] {
    return this.#processes
      .filter((p) => !p.running() && !this.#ended.has(p))
      .map(
        (p) =>
          `${this.#roles.get(p)} exited ${p.child.exitCode ?? p.child.signalCode}: ${p.stderr().slice(-1000)}`,
      );
  }

  /** SIGTERM each process, SIGKILL what is left after a bound. */
  async #stop(): Promise<void> {
    for (const p of this.#processes) this.#ended.add(p);
    await Promise.all(this.#processes.map(stopOne));
  }

  /** Each process's output, a file each named by its role and pid. */
  async #keepOutput(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    for (const p of this.#processes)
      await writeFile(join(dir, `${this.#roles.get(p)}-${p.child.pid}.log`), p.stdout() + p.stderr());
  }
}

async function metricsAnswer(p: Proc, port: number, role: string): Promise<void> {
  await waitFor(
    `the ${role} process up (its metrics port answering)`,
    async () => {
      if (!p.running()) throw new Error(`the ${role} process exited: ${p.stderr()}`);
      try {
        return (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(1000) })).ok;
      } catch {
        return false;
      }
    },
    READY_MS,
    { everyMs: 200 },
  );
}

async function stopOne(p: Proc): Promise<void> {
  if (p.group) {
    if (groupAlive(p)) process.kill(-p.child.pid!, 'SIGKILL'); // the CLI under npm, if still there
    return;
  }
  if (!p.running()) return;
  p.child.kill('SIGTERM');
  await exitWithin(p, STOP_MS).catch(() => undefined); // past the bound, exitWithin has SIGKILLed it
}
