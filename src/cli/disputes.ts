import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `disputes list|lost`: chargebacks of orders, listed, and an open one recorded as lost. What runs
 * is in actions/disputes.ts, loaded by the command that runs.
 */
export function addDisputes(program: Command): void {
  const run = () => import('./actions/disputes.js');
  const disputes = program
    .command('disputes')
    .description('chargebacks of orders: open, won (reversed by the gateway) or lost (an operator said so)');

  disputes
    .command('list')
    .description('newest first; JSON on stdout')
    .option('--outcome <outcome>', 'only open, won or lost disputes')
    .option('--limit <n>', 'at most this many (1 to 1000)', '100')
    .action(kitAction(async (kit, o: { outcome?: string; limit: string }) => (await run()).list(kit, o)));

  disputes
    .command('lost <id>')
    .description('record an open dispute as lost (the bank ruled for the customer); the order stays disputed')
    .requiredOption('--note <text>', 'what the bank decided (at most 512 characters, no card number)')
    .option('--by <name>', 'who decided (kept with the dispute; default: cli)')
    .action(
      kitAction(async (kit, id: string, o: { note: string; by?: string }) => (await run()).lost(kit, id, o)),
    );
}
