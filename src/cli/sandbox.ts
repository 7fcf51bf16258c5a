import type { Command } from 'commander';
import { kitAction } from './kit-session.js';
import type { TriggerDeps } from './sandbox-triggers.js';

/** How long a trigger watches the kit's order for the webhook's change, by default (`--wait`). */
const DEFAULT_WAIT_S = 5;

/**
 * `sandbox reset|advance|tick|settle|chargeback|reverse|outage`: the sandbox gateway's state, and its
 * controls by the kit's own order ids. What runs is in actions/sandbox.ts (reset) and
 * sandbox-triggers.ts (the controls), loaded by the command that runs.
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
    .action(kitAction(async (kit) => (await import('./actions/sandbox.js')).reset(kit)));

  /** A trigger, run with its deps (sandbox-triggers.ts), built when it runs and closed after. */
  const trigger = <A extends unknown[]>(
    run: (t: typeof import('./sandbox-triggers.js'), d: TriggerDeps, ...args: A) => Promise<void>,
  ) =>
    kitAction(async (kit, ...args: A) => {
      const [t, { triggerDeps }] = await Promise.all([
        import('./sandbox-triggers.js'),
        import('./actions/sandbox.js'),
      ]);
      await run(t, await triggerDeps(kit), ...args);
    });
  const wait = [
    '--wait <seconds>',
    "how long to watch the kit's order for the change",
    String(DEFAULT_WAIT_S),
  ] as const;

  sandbox
    .command('advance <duration>')
    .description(
      'move the sandbox clock forward (90s, 15m, 2h, 7d, 1h30m): expiries, retries and windows follow',
    )
    .action(trigger((t, d, duration: string) => t.advance(d, duration)));

  sandbox
    .command('tick')
    .description('run every webhook delivery, expiry and retry due at the sandbox clock, now')
    .action(trigger((t, d) => t.tick(d)));

  sandbox
    .command('settle <order> <outcome>')
    .description("settle an order's payment session (or a session ps_...) paid, failed or cancelled")
    .option(...wait)
    .action(
      trigger((t, d, id: string, outcome: string, o: { wait: string }) => t.settle(d, id, outcome, o.wait)),
    );

  sandbox
    .command('chargeback <order>')
    .description("charge back the order's payment at the gateway (default: all captured and not refunded)")
    .option('--amount <amount>', "in major units, such as 5.00 (the order's currency)")
    .option(...wait)
    .action(
      trigger((t, d, id: string, o: { amount?: string; wait: string }) =>
        t.chargeback(d, id, o.amount, o.wait),
      ),
    );

  sandbox
    .command('reverse <order>')
    .description("reverse the chargeback of the order's payment (the dispute won): captured again")
    .option(...wait)
    .action(trigger((t, d, id: string, o: { wait: string }) => t.reverse(d, id, o.wait)));

  sandbox
    .command('outage <duration>')
    .description("fail every webhook delivery to this key's merchant for a while of sandbox clock")
    .option(
      '--merchant <id>',
      'the merchant whose deliveries fail (required when the kit acts for several: GATEWAY_MERCHANTS)',
    )
    .action(trigger((t, d, duration: string, o: { merchant?: string }) => t.outage(d, duration, o.merchant)));
}
