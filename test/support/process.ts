import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';

/**
 * The real entry points (`src/main.ts`, `src/cli.ts`) as child processes, and what tests around them
 * need: bounded waits, free ports, and databases of their own that are dropped afterwards.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ADMIN_URL = 'mysql://root@127.0.0.1:3306';

/** Variables the kit reads: none leaks in from the test runner's environment. */
export const KIT_VARIABLES = [
  'NODE_ENV',
  'PORT',
  'PUBLIC_BASE_URL',
  'DATABASE_URL',
  'REDIS_URL',
  'GATEWAY_BASE_URL',
  'GATEWAY_API_KEY',
  'GATEWAY_MERCHANT_ID',
  'GATEWAY_WEBHOOK_SECRETS',
  'GATEWAY_PORT',
  'GATEWAY_SEED',
  'OPS_API_TOKEN',
  'APP_ENCRYPTION_KEY',
  'ROLES',
  'LOG_LEVEL',
  'SHOP_URL',
  'ORDER_CURRENCIES',
  'ORDER_MAX_AMOUNT',
  'SHUTDOWN_GRACE_MS',
  'HTTP_REQUEST_TIMEOUT_MS',
  'GATEWAY_SANDBOX_STATE',
];

export interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running: () => boolean;
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `script` (relative to the repository) under tsx with `env` over a cleaned environment. */
export function start(script: string, args: string[], env: Record<string, string>): Proc {
  const base = { ...process.env };
  for (const name of KIT_VARIABLES) delete base[name];
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    // The sandbox keeps no state file unless a test asks for one: runs never share state.
    env: { ...base, NODE_ENV: 'development', LOG_LEVEL: 'warn', GATEWAY_SANDBOX_STATE: 'memory', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => {
    out += String(chunk);
  });
  child.stderr!.on('data', (chunk) => {
    err += String(chunk);
  });
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  return { child, stdout: () => out, stderr: () => err, exited, running: () => !done };
}

/** The process's exit, or a failure after `ms` (the process is then killed). */
export async function exitWithin(p: Proc, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      p.child.kill('SIGKILL');
      reject(new Error(`no exit within ${ms} ms; stderr: ${p.stderr()}`));
    }, ms);
  });
  try {
    return await Promise.race([p.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What one suite starts and creates: `track` each process, push each database name; `cleanUp` (for
 * the suite's `after` hook) kills whatever still runs, waiting a bounded time for each, then drops
 * the databases.
 */
export function leftovers() {
  const processes: Proc[] = [];
  const databases: string[] = [];
  return {
    databases,
    track: (p: Proc) => {
      processes.push(p);
      return p;
    },
    cleanUp: async () => {
      for (const p of processes) {
        if (p.running()) {
          p.child.kill('SIGKILL');
          await exitWithin(p, 5000).catch(() => undefined);
        }
      }
      await dropDatabases(databases);
    },
  };
}

/**
 * Polls `probe` every `everyMs` until it returns a truthy value, and returns that value; fails after
 * `withinMs`, naming `what` and appending `context()` (say, a child's stderr). A probe may throw to
 * fail at once (a process that exited will never become ready).
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  withinMs = 10_000,
  { everyMs = 10, context }: { everyMs?: number; context?: () => string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`not within ${withinMs} ms: ${what}${context ? `. ${context()}` : ''}`);
    await delay(everyMs);
  }
}

/** Waits until `url/healthz` answers 200; fails early if the process exits. */
export async function healthy(p: Proc, url: string, withinMs: number): Promise<void> {
  await waitFor(
    `${url}/healthz answering 200`,
    async () => {
      if (!p.running()) throw new Error(`main exited early: ${p.stderr()}`);
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
        return res.status === 200;
      } catch {
        return false; // not listening yet
      }
    },
    withinMs,
    { everyMs: 100, context: () => p.stderr() },
  );
}

/** A port free right now (bound on 0 and released), other than those in `avoid`. */
export async function freePort(avoid: number[] = []): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (!avoid.includes(port)) return port;
  }
}

/** A database name no other run uses: `merchant_<file>_<what>_<pid>_<random>`. */
export const databaseName = (file: string, what: string) =>
  `merchant_${file}_${what}_${process.pid}_${randomBytes(3).toString('hex')}`;

export async function dropDatabases(names: string[]): Promise<void> {
  const connection = await mysql.createConnection(ADMIN_URL);
  try {
    for (const name of names) await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await connection.end();
  }
}

export async function databaseExists(name: string): Promise<boolean> {
  const connection = await mysql.createConnection(ADMIN_URL);
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW DATABASES LIKE ?', [name]);
    return rows.length > 0;
  } finally {
    await connection.end();
  }
}

/** The non-blank lines of a process's output. */
export const lines = (text: string) => text.split(/\r?\n/).filter((l) => l.trim() !== '');
