import type { KitSession } from '../kit-session.js';
import type { TriggerDeps } from '../sandbox-triggers.js';

/** `sandbox reset` and the triggers' deps (registered in ../sandbox.ts). */

export async function reset(kit: KitSession) {
  const c = kit.config;
  const file = c.gateway.sandboxStateFile;
  if (file === null) return console.log('GATEWAY_SANDBOX_STATE=memory: there is no state file to reset');
  // A running sandbox would write its state back on its next change: refuse rather than pretend.
  const running = await fetch(`http://127.0.0.1:${c.gateway.sandboxPort}/`, {
    signal: AbortSignal.timeout(1000),
  })
    .then(() => true)
    .catch(() => false);
  if (running) {
    console.error(
      `a sandbox is running on port ${c.gateway.sandboxPort}: stop the kit (or npm run gateway) first`,
    );
    process.exit(1);
  }
  // The sandbox's own module, loaded here alone: the triggers, which share this file, never need it.
  const { removeStateFile } = await import('../../gateway/persistence/state-file.js');
  removeStateFile(file);
  console.log(
    `${file} removed: the next start begins with no transactions (orders the kit already holds stay, and their ids may come again)`,
  );
}

/** What a trigger runs with: the sandbox's controls, the kit's store when it asks, the terminal. */
export async function triggerDeps(kit: KitSession): Promise<TriggerDeps> {
  return {
    config: kit.config,
    controls: await kit.sandboxControls(),
    withStore: async (fn) => fn(await kit.store()),
    out: (line) => console.log(line),
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}
