import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `report`: the reconciliation report of a range of orders, as CSV: into `--out` with its totals on
 * stdout, or on stdout itself with the totals on stderr. What runs is in actions/report.ts.
 */
export function addReport(program: Command): void {
  program
    .command('report')
    .description(
      'the reconciliation report of the orders created in [from, to), as CSV: into --out (totals on stdout), or on stdout (totals on stderr)',
    )
    .requiredOption('--from <time>', 'orders created from this ISO 8601 date or time (inclusive)')
    .requiredOption('--to <time>', 'to this one (exclusive): --from 2026-11-23 --to 2026-11-24 is the 23rd')
    .option('--out <file.csv>', 'where to write the CSV (default: stdout)')
    .option('--refresh', 'ask the gateway first about every order not matched (within the shared budget)')
    .option(
      '--merchant <id>',
      "one merchant's orders only (platform mode: one of GATEWAY_MERCHANTS, or one the kit acted for before)",
    )
    .action(
      kitAction(
        async (kit, o: { from: string; to: string; out?: string; refresh?: boolean; merchant?: string }) =>
          (await import('./actions/report.js')).report(kit, o),
      ),
    );
}
