import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { reportCsv } from '../../merchant/reports/csv.js';
import { reconciliationReport } from '../../merchant/reports/generate.js';
import type { CurrencyTotals } from '../../merchant/reports/reconciliation.js';
import { merchantId, timestamp } from '../input.js';
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
  options: { from: string; to: string; out?: string; refresh?: boolean; merchant?: string },
) {
  const range = {
    from: timestamp('--from', options.from),
    to: timestamp('--to', options.to),
    ...(options.merchant === undefined ? {} : { merchantId: merchantId('--merchant', options.merchant) }),
  };
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
  const money = (
    t: Pick<
      CurrencyTotals,
      'captured_formatted' | 'refunded_formatted' | 'disputed_formatted' | 'net_formatted'
    >,
  ) =>
    `captured ${t.captured_formatted}, refunded ${t.refunded_formatted}, disputed ${t.disputed_formatted}, net ${t.net_formatted}`;
  // Per merchant too when the orders are of several (platform mode); a single shop's lines as before.
  const merchants = new Set(made.totalsByMerchant.map((t) => t.merchant_id));
  const whose = made.merchantId === undefined ? '' : ` of merchant ${made.merchantId}`;
  const summary = summaryLines(
    `reconciliation of the orders${whose} created from ${made.from.toISOString()} to ${made.to.toISOString()}`,
    [
      ['orders', made.rows.length],
      ['matched', counts('matched')],
      ['in flight', counts('in_flight')],
      ['mismatched', counts('mismatched')],
      ['resolved by a review', counts('resolved')],
      ...made.totals.map((t): [string, string] => [t.currency, money(t)]),
      ...(merchants.size > 1
        ? made.totalsByMerchant.map((t): [string, string] => [
            `  merchant ${t.merchant_id ?? '(unknown)'} ${t.currency}`,
            `${t.orders} orders; ${money(t)}`,
          ])
        : []),
      // Of the report's merchants: the money whose events came to their webhook endpoints.
      ['gateway money with no order', made.unmatched.rows.length],
      ...made.unmatched.totals.map((t): [string, string] => [
        `  ${t.currency}`,
        `${t.open} open; ${money(t)}`,
      ]),
      ['written to', options.out ?? 'stdout'],
    ],
  );
  if (options.out === undefined) console.error(summary);
  else console.log(summary);
}
