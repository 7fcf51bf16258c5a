import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { waitFor } from './process.js';

/*
 * A private redis-server on a port of its own, with no persistence (`--save '' --appendonly no`):
 * for tests that stop, restart or empty Redis, never the shared one on 6379 that other runs use.
 */

/** Whether the server's process still runs. */
export function alive(child: ChildProcess | null): child is ChildProcess {
  return child !== null && child.exitCode === null && child.signalCode === null;
}

function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += String(chunk);
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.startsWith('+PONG'));
      }
    });
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
  });
}

export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  try {
    await waitFor(`redis-server on port ${port}`, async () => {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`redis-server exited (${child.exitCode ?? child.signalCode})`);
      return pingOnce(port);
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

export async function stopRedis(child: ChildProcess | null): Promise<void> {
  if (!alive(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
