import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { reportCsv } from '../../merchant/reports/csv.js';
import { reconciliationReport } from '../../merchant/reports/generate.js';
import { timestamp } from '../input.js';
import type { KitSession } from '../kit-session.js';
import { openForWriting } from '../output.js';
import { summaryLines, withProgressBar } from '../progress.js';

/**
 * `report` (registered in ../report.ts). Into `--out`, the totals on stdout; without it the CSV is
 * stdout (`npm run -s cli -- report ... > day.csv`, or piped on), and the totals go to stderr so
 * that stdout holds nothing but the CSV.
 */
export async function report(
  kit: KitSession,
  options: { from: string; to: string; out?: string; refresh?: boolean },
) {
  const range = { from: timestamp('--from', options.from), to: timestamp('--to', options.to) };
  if (range.to.getTime() <= range.from.getTime()) {
    console.error('--to: must be after --from');
    process.exit(1);
  }
  // Opened before the report is made: a path it cannot write is said before any work (or gateway call).
  const out: Writable =
    options.out === undefined ? process.stdout : await openForWriting('--out', options.out);
  const made = await withProgressBar(async (bar) =>
    reconciliationReport((await kit.adapters()).adapters.checkout, range, {
      refresh: options.refresh === true,
      caller: 'cli',
      onProgress: (...at) => bar.update(...at),
    }),
  );
  // stdout is not ended with the CSV: the process writes nothing more there, and exits when done.
  await pipeline(reportCsv(made.rows, made.unmatched.rows), out, { end: out !== process.stdout });
  const counts = (k: string) => made.rows.filter((r) => r.classification === k).length;
  const summary = summaryLines(
    `reconciliation of the orders created from ${made.from.toISOString()} to ${made.to.toISOString()}`,
    [
      ['orders', made.rows.length],
      ['matched', counts('matched')],
      ['in flight', counts('in_flight')],
      ['mismatched', counts('mismatched')],
      ['resolved by a review', counts('resolved')],
      ...made.totals.map((t): [string, string] => [
        t.currency,
        `captured ${t.captured_formatted}, refunded ${t.refunded_formatted}, disputed ${t.disputed_formatted}, net ${t.net_formatted}`,
      ]),
      ['gateway money with no order', made.unmatched.rows.length],
      ...made.unmatched.totals.map((t): [string, string] => [
        `  ${t.currency}`,
        `${t.open} open; captured ${t.captured_formatted}, refunded ${t.refunded_formatted}, disputed ${t.disputed_formatted}, net ${t.net_formatted}`,
      ]),
      ['written to', options.out ?? 'stdout'],
    ],
  );
  if (options.out === undefined) console.error(summary);
  else console.log(summary);
}
