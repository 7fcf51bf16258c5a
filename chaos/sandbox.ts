import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exitWithin, freePort, type Proc, start, waitFor } from '../test/support/process.js';
import type { Cleanup } from './cleanup.js';

/**
 * The sandbox gateway standalone (`npm run gateway`, `src/gateway/main.ts`), as compose runs it: a
 * process of its own that outlives every death of the kit's, with the seed that lets it deliver
 * webhooks to 127.0.0.1. Its state stays in its memory: the run never restarts it.
 */

const READY_MS = 30_000;
const STOP_MS = 15_000;

export interface Sandbox {
  url: string;
  /** Null while it runs; what it said when it exited otherwise. */
  died(): string | null;
}

export async function standaloneSandbox(cleanup: Cleanup, logDir?: string): Promise<Sandbox> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { GATEWAY_PORT: String(port), GATEWAY_SEED: 'config/gateway-seed.compose.json' };
  const p = start('src/gateway/main.ts', [], env);
  let stopped = false;
  if (logDir) cleanup.add(`keep the sandbox's output in ${logDir}`, () => keepOutput(p, logDir));
  cleanup.add('stop the sandbox', async () => {
    stopped = true;
    if (!p.running()) return;
    p.child.kill('SIGTERM');
    await exitWithin(p, STOP_MS).catch(() => undefined); // past the bound, exitWithin has SIGKILLed it
  });
  await waitFor(
    `the sandbox answering on ${url}`,
    async () => {
      if (!p.running()) throw new Error(`the sandbox exited: ${p.stderr()}`);
      return fetch(`${url}/`, { signal: AbortSignal.timeout(1000) }).then(
        () => true,
        () => false,
      );
    },
    READY_MS,
    { everyMs: 100 },
  );
  return {
    url,
    died: () =>
      p.running() || stopped
        ? null
        : `the sandbox exited ${p.child.exitCode ?? p.child.signalCode}: ${p.stderr().slice(-1000)}`,
  };
}

async function keepOutput(p: Proc, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `sandbox-${p.child.pid}.log`), p.stdout() + p.stderr());
}
