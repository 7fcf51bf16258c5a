/** The bench's child processes: started, awaited with a bound, stopped with SIGTERM. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

export interface Child {
  process: ChildProcess;
  /** The first line it writes on stdout. */
  firstLine(): Promise<string>;
  /** Resolves once it has written a line that contains `text` on stdout (the kit's `started` log line). */
  said(text: string): Promise<void>;
  /** Its stderr so far, for an error message. */
  errors(): string;
  stop(): Promise<void>;
}

/** A process of its own; its stdout (the kit's log lines) is read and dropped, as a log shipper would. */
export function spawnChild(command: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const lines = createInterface({ input: child.stdout! });
  const first = new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`)));
  });
  first.catch(() => {});
  child.stdout!.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    firstLine: () => first,
    said: (text) =>
      new Promise<void>((resolve, reject) => {
        const seen = (line: string) => {
          if (!line.includes(text)) return;
          lines.off('line', seen);
          resolve();
        };
        lines.on('line', seen);
        child.once('exit', (code) =>
          reject(new Error(`${command} exited ${code} before saying ${text}: ${stderr}`)),
        );
      }),
    errors: () => stderr,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs a command to its end; its stdout, or an error with its stderr. */
export function runToEnd(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}: ${err}`)),
    );
  });
}

export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  withinMs: number,
  watched?: Child,
): Promise<void> {
  const until = Date.now() + withinMs;
  while (!(await check())) {
    if (watched && watched.process.exitCode !== null)
      throw new Error(`waiting for ${what}: it exited: ${watched.errors()}`);
    if (Date.now() > until) throw new Error(`${what}: not within ${withinMs} ms. ${watched?.errors() ?? ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
