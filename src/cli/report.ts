import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { timestamp } from './input.js';
import { kitAction } from './kit-session.js';
import { openForWriting } from './output.js';
import { summaryLines, withProgressBar } from './progress.js';

/** `report`: the reconciliation report of a range of orders, as CSV; its totals on stdout. */
export function addReport(program: Command): void {
  program
    .command('report')
    .description('the reconciliation report of the orders created in [from, to), as CSV; totals on stdout')
    .requiredOption('--from <time>', 'orders created from this ISO 8601 date or time (inclusive)')
    .requiredOption('--to <time>', 'to this one (exclusive): --from 2026-11-23 --to 2026-11-24 is the 23rd')
    .requiredOption('--out <file.csv>', 'where to write the CSV')
    .option('--refresh', 'ask the gateway first about every order not matched (within the shared budget)')
    .action(
      kitAction(async (kit, options: { from: string; to: string; out: string; refresh?: boolean }) => {
        const range = { from: timestamp('--from', options.from), to: timestamp('--to', options.to) };
        if (range.to.getTime() <= range.from.getTime()) {
          console.error('--to: must be after --from');
          process.exit(1);
        }
        // Opened before the report is made: a path it cannot write is said before any work (or gateway call).
        const out = await openForWriting('--out', options.out);
        const [{ reconciliationReport }, { reportCsv }] = await Promise.all([
          import('../merchant/reports/generate.js'),
          import('../merchant/reports/csv.js'),
        ]);
        const report = await withProgressBar(async (bar) =>
          reconciliationReport((await kit.adapters()).adapters.checkout, range, {
            refresh: options.refresh === true,
            caller: 'cli',
            onProgress: (...at) => bar.update(...at),
          }),
        );
        await pipeline(reportCsv(report.rows, report.unmatched.rows), out);
        const counts = (k: string) => report.rows.filter((r) => r.classification === k).length;
        console.log(
          summaryLines(
            `reconciliation of the orders created from ${report.from.toISOString()} to ${report.to.toISOString()}`,
            [
              ['orders', report.rows.length],
              ['matched', counts('matched')],
              ['in flight', counts('in_flight')],
              ['mismatched', counts('mismatched')],
              ['resolved by a review', counts('resolved')],
              ...report.totals.map((t): [string, string] => [
                t.currency,
                `captured ${t.captured_formatted}, refunded ${t.refunded_formatted}, disputed ${t.disputed_formatted}, net ${t.net_formatted}`,
              ]),
              ['gateway money with no order', report.unmatched.rows.length],
              ...report.unmatched.totals.map((t): [string, string] => [
                `  ${t.currency}`,
                `${t.open} open; captured ${t.captured_formatted}, refunded ${t.refunded_formatted}, net ${t.net_formatted}`,
              ]),
              ['written to', options.out],
            ],
          ),
        );
      }),
    );
}
