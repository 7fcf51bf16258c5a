import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `unmatched list|attach|resolve`: gateway money with no order, listed, applied to an order through
 * the apply path, or resolved with a note. What runs is in actions/unmatched.ts.
 */
export function addUnmatched(program: Command): void {
  const run = () => import('./actions/unmatched.js');
  const unmatched = program
    .command('unmatched')
    .description('gateway money with no order: transactions no payment attempt holds, kept for an operator');

  unmatched
    .command('list')
    .description('newest first; JSON on stdout')
    .option('--resolution <resolution>', 'only open, attached or resolved money')
    .option('--limit <n>', 'at most this many (1 to 1000)', '100')
    .option('--merchant <id>', "one merchant's money (platform mode): whose endpoint its event came to")
    .action(
      kitAction(async (kit, o: { resolution?: string; limit: string; merchant?: string }) =>
        (await run()).list(kit, o),
      ),
    );

  unmatched
    .command('attach <id>')
    .description("apply the money to an order through the apply path: the order's payment (JSON on stdout)")
    .requiredOption('--order <order_id>', 'the order the money belongs to')
    .option('--by <name>', 'who decided (kept with the money; default: cli)')
    .action(
      kitAction(async (kit, id: string, o: { order: string; by?: string }) =>
        (await run()).attach(kit, id, o),
      ),
    );

  unmatched
    .command('resolve <id>')
    .description('resolve the money with a note (what was found); it leaves the open list')
    .requiredOption('--note <text>', 'what was found (at most 512 characters, no card number)')
    .option('--by <name>', 'who decided (kept with the money; default: cli)')
    .action(
      kitAction(async (kit, id: string, o: { note: string; by?: string }) =>
        (await run()).resolve(kit, id, o),
      ),
    );
}
