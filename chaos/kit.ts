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
 */

const READY_MS = 60_000;
const STOP_MS = 15_000;

export interface KitSettings {
  databaseUrl: string;
  redisUrl: string;
  /** When set, each process's output is written there at the end (CHAOS_LOG_DIR). */
  logDir?: string;
}

export class KitProcesses {
  readonly apiUrl: string;
  readonly gatewayUrl: string;
  readonly opsToken = `chaos-ops-${randomBytes(12).toString('hex')}`;
  /** APP_ENCRYPTION_KEY: the run reads the stored signing secret with it. */
  readonly encryptionKey = randomBytes(32).toString('base64');
  /** The Redis prefix of the queue and the locks. */
  readonly redisPrefix = 'chaos';
  readonly #processes: Proc[] = [];
  readonly #roles = new Map<Proc, string>();
  /** Processes the run itself ended (the killed worker, the CLI, everything at the stop). */
  readonly #ended = new Set<Proc>();
  #worker: Proc | null = null;

  private constructor(
    private readonly settings: KitSettings,
    private readonly port: number,
    private readonly gatewayPort: number,
  ) {
    this.apiUrl = `http://127.0.0.1:${port}`;
    this.gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  }

  /** The api, then a worker and a scheduler beside it; registered with `cleanup` before the first starts. */
  static async start(settings: KitSettings, cleanup: Cleanup): Promise<KitProcesses> {
    const port = await freePort();
    const kit = new KitProcesses(settings, port, await freePort([port]));
    const { logDir } = settings;
    if (logDir) cleanup.add(`keep the kit's output in ${logDir}`, () => kit.#keepOutput(logDir)); // after the stop
    cleanup.add('stop the kit', () => kit.#stop());
    await kit.#startApi();
    await kit.startWorker();
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
    };
  }

  #track(p: Proc, role: string): Proc {
    this.#processes.push(p);
    this.#roles.set(p, role);
    return p;
  }

  async #startApi(): Promise<void> {
    const env = {
      ...this.#env(),
      ROLES: 'api',
      PORT: String(this.port),
      GATEWAY_PORT: String(this.gatewayPort),
    };
    await healthy(this.#track(start('src/main.ts', [], env), 'api'), this.apiUrl, READY_MS);
  }

  /** A worker or scheduler on the api process's sandbox as its gateway, as compose runs them. */
  async #startRole(role: 'worker' | 'scheduler'): Promise<Proc> {
    // It serves no API: its own metrics port answering says it is up.
    const metricsPort = await freePort([this.port, this.gatewayPort]);
    const env = {
      ...this.#env(),
      ROLES: role,
      GATEWAY_BASE_URL: this.gatewayUrl,
      GATEWAY_API_KEY: SANDBOX_MERCHANT_KEY,
      PORT: String(metricsPort),
      METRICS_PORT: String(metricsPort),
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

  /** `npm run cli -- webhook rotate` beside the running kit; fails unless it exits 0. */
  async rotateSecret(): Promise<void> {
    // Without GATEWAY_BASE_URL the CLI attaches to the running kit's sandbox on GATEWAY_PORT, and
    // stores the new secret under the embedded sandbox's label, retiring the one it replaces.
    const env = { ...this.#env(), GATEWAY_PORT: String(this.gatewayPort) };
    const cli = this.#track(startNpm(['run', '-s', 'cli', '--', 'webhook', 'rotate'], env), 'cli');
    this.#ended.add(cli);
    const { code } = await exitWithin(cli, READY_MS);
    if (code !== 0) throw new Error(`webhook rotate exited ${code}: ${cli.stderr()}`);
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
