/**
 * The CLI's start (`npm run bench`, section `cli`): how long an operator waits for `npm run cli --
 * --help` and for two commands that read the database (`operator list`, `order-events status`),
 * each run to its end in a child process as a terminal runs it, npm included, beside `node -e 0` (a
 * Node process that does nothing: the floor no command goes under). Alternating rounds, so that a
 * moment of load on the shared machine falls on every command alike; medians.
 */
import { spawn } from 'node:child_process';
import { median } from './stats.js';

interface Timed {
  label: string;
  command: string;
  args: string[];
  /** The longest a command may take on a quiet machine (issue 42, part 2); none for the floor. */
  targetS: number | null;
}

const npmCli = (...args: string[]) => ({ command: 'npm', args: ['run', '-s', 'cli', '--', ...args] });

const COMMANDS: Timed[] = [
  { label: 'node -e 0', command: process.execPath, args: ['-e', '0'], targetS: null },
  { label: 'npm run cli -- --help', ...npmCli('--help'), targetS: 0.5 },
  { label: 'npm run cli -- operator list', ...npmCli('operator', 'list'), targetS: 1 },
  { label: 'npm run cli -- order-events status', ...npmCli('order-events', 'status'), targetS: 1 },
];

/** Seconds from the spawn to the exit; a failure is an error with the command's stderr. */
function timed(t: Timed, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(t.command, t.args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const s = (performance.now() - started) / 1000;
      if (code === 0) resolve(s);
      else reject(new Error(`${t.label} exited ${code}: ${stderr}`));
    });
  });
}

/**
 * `rounds` alternating rounds of every command, after one round not counted (the first `npm run
 * cli` after a change of the sources compiles them). `env`: the CLI's settings (a migrated database).
 */
export async function cliSection(rounds: number, env: Record<string, string>): Promise<string[]> {
  for (const t of COMMANDS) await timed(t, env);
  const seconds: number[][] = COMMANDS.map(() => []);
  for (let round = 1; round <= rounds; round++) {
    for (const [i, t] of COMMANDS.entries()) seconds[i]!.push(await timed(t, env));
    console.error(
      `  round ${round}: ${COMMANDS.map((t, i) => `${t.label} ${seconds[i]!.at(-1)!.toFixed(2)} s`).join(', ')}`,
    );
  }
  const floor = median(seconds[0]!);
  const rows = COMMANDS.map((t, i) => {
    const s = seconds[i]!;
    const m = median(s);
    const target = t.targetS === null ? '-' : `${t.targetS} s`;
    return `| \`${t.label}\` | ${m.toFixed(2)} | ${Math.min(...s).toFixed(2)} | ${Math.max(...s).toFixed(2)} | ${i === 0 ? '-' : `+${(m - floor).toFixed(2)}`} | ${target} |`;
  });
  return [
    `The CLI's start, to its exit, npm included (median of ${rounds} alternating rounds, each command a process of its own; the database migrated, no kit running):`,
    '',
    '| command | median s | min s | max s | over `node -e 0` | target (quiet machine) |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ];
}
