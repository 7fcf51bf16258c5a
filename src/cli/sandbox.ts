import type { Command } from 'commander';
import { kitAction } from './kit-session.js';
import { addSandboxTriggers } from './sandbox-triggers.js';

/**
 * `sandbox reset|advance|tick|settle|chargeback|reverse|outage`: the sandbox gateway's state, and its
 * controls by the kit's own order ids (sandbox-triggers.ts).
 */
export function addSandbox(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description(
      'the sandbox gateway: its state, and its controls (a clock, settlements, chargebacks, outages)',
    );

  sandbox
    .command('reset')
    .description(
      'forget the sandbox state (GATEWAY_SANDBOX_STATE) so the next start begins afresh; stop the kit first',
    )
    .action(
      kitAction(async (kit) => {
        const c = kit.config;
        const file = c.gateway.sandboxStateFile;
        if (file === null)
          return console.log('GATEWAY_SANDBOX_STATE=memory: there is no state file to reset');
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
        const { removeStateFile } = await import('../gateway/persistence/state-file.js');
        removeStateFile(file);
        console.log(
          `${file} removed: the next start begins with no transactions (orders the kit already holds stay, and their ids may come again)`,
        );
      }),
    );

  addSandboxTriggers(sandbox, (run) =>
    kitAction(async (kit) =>
      run({
        config: kit.config,
        controls: await kit.sandboxControls(),
        withStore: async (fn) => fn(await kit.store()),
        out: (line) => console.log(line),
        now: () => Date.now(),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      }),
    )(),
  );
}
