import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { delay, freePort, waitFor } from '../test/support/process.js';

/**
 * The run's own MariaDB and Redis, in a folder of their own, on ports of their own: the faults stop,
 * flush and restart these, never the shared servers on 3306 and 6379 that other runs use.
 */

const run = promisify(execFile);
const MARIADBD = '/usr/sbin/mariadbd';
const READY_MS = 30_000;

/** Runs a command to its end, bounded; its stderr in the error when it fails. */
async function command(file: string, args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run(file, args, { timeout: timeoutMs });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`${file} ${args.join(' ')}: ${e.stderr?.trim() || e.message}`);
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` right now. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const closed = (port: number, what: string) =>
  waitFor(`${what} gone from port ${port}`, async () => !(await listening(port)), READY_MS, { everyMs: 100 });

export interface MariaDb {
  port: number;
  /** `mysql://root@127.0.0.1:<port>/<database>` (root, no password, as .ci/run's server). */
  url(database: string): string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A private mariadbd, not started yet: its datadir initialised in `dir`, its own port, socket, pid
 * file and error log.
 * Started as `.ci/run` starts the shared one, plus `--pidfile`: without it start-stop-daemon would
 * find the shared mariadbd running and, with --oknodo, start nothing.
 */
export async function privateMariaDb(dir: string): Promise<MariaDb> {
  const port = await freePort();
  const data = join(dir, 'data');
  const pidFile = join(dir, 'mariadbd.pid');
  // mariadbd runs as mysql: the folder (its datadir, socket, pid file and log) must be that user's.
  await command('chown', ['mysql:mysql', dir]);
  await command('mariadb-install-db', [
    '--user=mysql',
    `--datadir=${data}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
  ]);
  const options = [
    '--user=mysql',
    `--datadir=${data}`,
    `--port=${port}`,
    `--socket=${join(dir, 'mariadbd.sock')}`,
    `--pid-file=${pidFile}`,
    `--log-error=${join(dir, 'mariadbd.err')}`,
    '--bind-address=127.0.0.1',
  ];
  const db: MariaDb = {
    port,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    start: async () => {
      await command('start-stop-daemon', [
        '--start',
        '--oknodo',
        '--background',
        '--pidfile',
        pidFile,
        '--exec',
        MARIADBD,
        '--',
        ...options,
      ]);
      await waitFor(`the private MariaDB on ${port}`, () => mariaDbAnswers(port), READY_MS, { everyMs: 100 });
    },
    stop: async () => {
      await command('start-stop-daemon', [
        '--stop',
        '--oknodo',
        '--pidfile',
        pidFile,
        '--exec',
        MARIADBD,
        '--retry',
        'TERM/30/KILL/5',
      ]);
      await closed(port, 'the private MariaDB');
    },
  };
  return db;
}

async function mariaDbAnswers(port: number): Promise<boolean> {
  try {
    const connection = await mysql.createConnection({
      host: '127.0.0.1',
      port,
      user: 'root',
      connectTimeout: 1000,
    });
    await connection.end();
    return true;
  } catch {
    return false;
  }
}

export interface PrivateRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  /** SHUTDOWN NOSAVE: with no persistence, its data is gone with it. */
  stop(): Promise<void>;
  flushAll(): Promise<void>;
}

/** A private redis-server, not started yet: no persistence (`--save "" --appendonly no`), daemonized, files in `dir`. */
export async function privateRedis(dir: string): Promise<PrivateRedis> {
  const port = await freePort();
  const cli = (...args: string[]) =>
    command('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], 10_000);
  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    start: async () => {
      await command('redis-server', [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'yes',
        '--dir',
        dir,
        '--pidfile',
        join(dir, 'redis.pid'),
        '--logfile',
        join(dir, 'redis.log'),
      ]);
      await waitFor(
        `the private Redis on ${port}`,
        async () => (await cli('PING').catch(() => '')).trim() === 'PONG',
        READY_MS,
        { everyMs: 100 },
      );
    },
    stop: async () => {
      await cli('SHUTDOWN', 'NOSAVE').catch(() => undefined); // the connection drops as it goes
      await closed(port, 'the private Redis');
    },
    flushAll: async () => {
      const answer = (await cli('FLUSHALL')).trim();
      if (answer !== 'OK') throw new Error(`FLUSHALL answered ${answer}`);
    },
  };
  return redis;
}

/** A restart that stays down `downMs`, so that the kit sees the service gone. */
export async function restart(service: { stop(): Promise<void>; start(): Promise<void> }, downMs: number) {
  await service.stop();
  await delay(downMs);
  await service.start();
}

/**
 * Removes the private folder, looking again for a few seconds: a server stopped by the same signal
 * (mariadb-install-db's bootstrap server, on Ctrl-C at the very start) may still write its last file.
 */
export async function removeFolder(dir: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    await delay(1000);
    if (!existsSync(dir)) return;
  }
  throw new Error(`${dir} is still there`);
}
