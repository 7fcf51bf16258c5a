import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { envSchema } from '../../src/config.js';
import { jsonOf } from './gateway.js';
import { logged } from './log-sink.js';
import { keepSecret, withSecret } from './order-secrets.js';

/**
 * The real entry points (`src/main.ts`, `src/cli.ts`) as child processes, and what tests around them
 * need: bounded waits, free ports, and databases of their own that are dropped afterwards.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ADMIN_URL = 'mysql://root@127.0.0.1:3306';

// biome-ignore lint/suspicious/noExplicitAny: tests read envelopes of every shape
type Envelope = any;

/**
 * The client secrets of the orders `call` made, by order id (ids are random: one map serves every
 * kit a test starts), sent on those orders' shopper routes as a storefront would.
 */
const SECRETS = new Map<string, string>();

/**
 * One HTTP call to a running kit process: JSON in (when there is a body), the answer read whole. An
 * order's client secret goes with its shopper routes, as `keepSecret` kept it.
 */
export async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Envelope; text: string; type: string; headers: Headers }> {
  const sent = withSecret(SECRETS, method, path, headers);
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? sent : { 'content-type': 'application/json', ...sent },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  const answer = {
    status: res.status,
    body: jsonOf(text),
    text,
    type: res.headers.get('content-type') ?? '',
    headers: res.headers,
  };
  keepSecret(SECRETS, method, path, answer);
  return answer;
}

/** Variables the kit reads: none leaks in from the test runner's environment. */
export const KIT_VARIABLES = Object.keys(envSchema.shape);

export interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running: () => boolean;
  /** Spawned as the leader of its own process group (`startNpm`): clean-up kills the whole group. */
  group?: boolean;
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The Redis prefix of the processes this run starts: theirs alone, shared among them. */
export const SUITE_PREFIX = `test-proc-${process.pid}`;

/** The test runner's environment without the kit's variables, then the defaults of a test run, then `env`. */
function kitEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of KIT_VARIABLES) delete base[name];
  // The sandbox keeps no state file unless a test asks for one: runs never share state.
  // Its own Redis keys too: a suite running beside another (on one Redis) never takes the other's jobs.
  return {
    ...base,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    GATEWAY_SANDBOX_STATE: 'memory',
    REDIS_PREFIX: SUITE_PREFIX,
    // Never the default port: a kit a developer (or another suite) runs on it would turn a test about
    // something else into "port in use".
    PORT: '0',
    ...env,
  };
}

/**
 * Runs `script` (relative to the repository) under tsx with `env` over a cleaned environment;
 * `stdin`: what it reads there, then the end (default: nothing, as from /dev/null).
 */
export function start(
  script: string,
  args: string[],
  env: Record<string, string>,
  o: { stdin?: string } = {},
): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: kitEnv(env),
    stdio: [o.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (o.stdin !== undefined) child.stdin!.end(o.stdin);
  return watch(child, 'close');
}

/**
 * Runs compiled `script` (under dist/, relative to the repository) with plain node, as the image's
 * command does: no tsx, not even through NODE_OPTIONS.
 */
export function startBuilt(script: string, args: string[], env: Record<string, string>): Proc {
  const { NODE_OPTIONS: _, ...clean } = kitEnv(env);
  const child = spawn(process.execPath, [script, ...args], {
    cwd: ROOT,
    env: clean,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watch(child, 'close');
}

/**
 * Runs `npm <args>` in the repository, as a process manager would, with `env` over a cleaned
 * environment. npm leads a process group of its own (the kit runs in it): `groupAlive` tells whether
 * any process of it is left, and clean-up kills the group. `exited` is npm's own exit.
 */
export function startNpm(args: string[], env: Record<string, string>): Proc {
  const child = spawn('npm', args, {
    cwd: ROOT,
    env: kitEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return { ...watch(child, 'exit'), group: true };
}

/** Whether any process of the group that `p` leads still runs (npm's exit does not end its children). */
export function groupAlive(p: Proc): boolean {
  try {
    process.kill(-p.child.pid!, 0);
    return true;
  } catch {
    return false;
  }
}

/** Collects a child's output; `exited` on its 'close' (its stdio closed too) or its own 'exit'. */
function watch(child: ChildProcess, end: 'close' | 'exit'): Proc {
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => {
    out += String(chunk);
    logged(String(chunk));
  });
  child.stderr!.on('data', (chunk) => {
    err += String(chunk);
    logged(String(chunk));
  });
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on(end, (code: number | null, signal: NodeJS.Signals | null) => {
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
        if (p.group && groupAlive(p)) {
          try {
            process.kill(-p.child.pid!, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
          await waitFor('the process group gone', () => !groupAlive(p), 5000).catch(() => undefined);
        } else if (p.running()) {
          p.child.kill('SIGKILL');
          await exitWithin(p, 5000).catch(() => undefined);
        }
      }
      await dropDatabases(databases);
      await dropRedisKeys(`${SUITE_PREFIX}:*`);
    },
  };
}

/** Deletes the Redis keys matching `pattern` (what a suite's processes or a kit left: queue, locks, budget). */
export async function dropRedisKeys(pattern: string, url = 'redis://127.0.0.1:6379'): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const keys = await redis.keys(pattern);
    if (keys.length > 0) await redis.del(...keys);
  } catch {
    // Redis away: nothing to clean, and nothing a test should fail on here
  } finally {
    redis.disconnect();
  }
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

/** The JSON lines (pino) of a process's output; other lines (the printed token) are skipped. */
export function logLines(
  text: string,
): { msg?: string; level?: number; pid?: number; [key: string]: unknown }[] {
  return lines(text).flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as unknown;
      return parsed !== null && typeof parsed === 'object' ? [parsed as { msg?: string }] : [];
    } catch {
      return [];
    }
  });
}

/** What a raw HTTP exchange came to (`exchange`). */
export interface Exchange {
  /** refused: nothing listened; answered: a status line came back; closed / reset: the connection ended without one; timeout: nothing within the bound. */
  outcome: 'refused' | 'answered' | 'closed' | 'reset' | 'timeout';
  connected: boolean;
  status: number | null;
  headers: Record<string, string>;
  body: string;
  ms: number;
}

/**
 * Sends `request` (raw HTTP/1.1 text, which should say `Connection: close`) to 127.0.0.1:`port` on a
 * new connection and reads until the server closes it, for at most `timeoutMs`. No agent, no retry:
 * what a load balancer's probe sees.
 */
export function exchange(port: number, request: string, timeoutMs: number): Promise<Exchange> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let connected = false;
    let received = '';
    let settled = false;
    const finish = (outcome: Exchange['outcome']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ outcome, connected, ...parseResponse(received), ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(received.startsWith('HTTP/') ? 'answered' : 'timeout'), timeoutMs);
    socket.on('connect', () => {
      connected = true;
      socket.write(request);
    });
    socket.on('data', (chunk) => {
      received += String(chunk);
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      finish(received.startsWith('HTTP/') ? 'answered' : error.code === 'ECONNREFUSED' ? 'refused' : 'reset'),
    );
    socket.on('close', () => finish(received.startsWith('HTTP/') ? 'answered' : 'closed'));
  });
}

/** The status, headers (lower-cased names) and body of a raw HTTP/1.1 response; nulls where missing. */
export function parseResponse(text: string): {
  status: number | null;
  headers: Record<string, string>;
  body: string;
} {
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  const end = text.indexOf('\r\n\r\n');
  const headers: Record<string, string> = {};
  for (const line of text
    .slice(0, end < 0 ? text.length : end)
    .split('\r\n')
    .slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: status ? Number(status[1]) : null, headers, body: end < 0 ? '' : text.slice(end + 4) };
}

/** A raw connection kept open by the test: what a slow, stuck or keep-alive client does. */
export interface RawClient {
  socket: Socket;
  /** Everything received so far. */
  received: () => string;
  /** Whether the server (or an error) ended the connection. */
  ended: () => boolean;
  /** Resolves when the connection has ended. */
  closed: Promise<void>;
}

export function rawClient(port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let ended = false;
    const closed = new Promise<void>((done) =>
      socket.on('close', () => {
        ended = true;
        done();
      }),
    );
    socket.on('data', (chunk) => {
      received += String(chunk);
    });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined); // a reset by the server shows as `ended`
      resolve({ socket, received: () => received, ended: () => ended, closed });
    });
  });
}
