import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `report`: the reconciliation report of a range of orders, as CSV; its totals on stdout. What runs
 * is in actions/report.ts.
 */
export function addReport(program: Command): void {
  program
    .command('report')
    .description('the reconciliation report of the orders created in [from, to), as CSV; totals on stdout')
    .requiredOption('--from <time>', 'orders created from this ISO 8601 date or time (inclusive)')
    .requiredOption('--to <time>', 'to this one (exclusive): --from 2026-11-23 --to 2026-11-24 is the 23rd')
    .requiredOption('--out <file.csv>', 'where to write the CSV')
    .option('--refresh', 'ask the gateway first about every order not matched (within the shared budget)')
    .action(
      kitAction(async (kit, o: { from: string; to: string; out: string; refresh?: boolean }) =>
        (await import('./actions/report.js')).report(kit, o),
      ),
    );
}
