import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { REPORT_COLUMNS, type ReportRow } from './reconciliation.js';
import { UNMATCHED_COLUMNS, type UnmatchedMoneyRow } from './unmatched.js';

/**
 * The report as CSV (csv-stringify: quoting, escaping and line ends done right): one header line of
 * the stable column names, `true`/`false`, empty for null. Streams: rows can come page by page.
 *
 * Gateway money with no order (issue 19) is a table of its own, not orders: when the range has any,
 * a blank line and a second table follow the orders, with its own header line (`UNMATCHED_COLUMNS`,
 * starting `id,transaction_id`). A range without any gives the orders' table alone, as before.
 */
export function reportCsv(
  rows: AsyncIterable<ReportRow> | Iterable<ReportRow>,
  unmatched: readonly UnmatchedMoneyRow[] = [],
): Readable {
  return Readable.from(sections(rows, unmatched), { objectMode: false });
}

async function* sections(
  rows: AsyncIterable<ReportRow> | Iterable<ReportRow>,
  unmatched: readonly UnmatchedMoneyRow[],
): AsyncGenerator<string | Buffer> {
  yield* csvTable(rows, REPORT_COLUMNS);
  if (unmatched.length === 0) return;
  yield '\n';
  yield* csvTable(unmatched, UNMATCHED_COLUMNS);
}

/** One table: a header line of `columns`, then a line per row (also the audit export's). */
export function csvTable<R>(
  rows: AsyncIterable<R> | Iterable<R>,
  columns: readonly (keyof R & string)[],
): Readable {
  // escape_formulas: a field a spreadsheet would run (=, +, -, @ ...) starts with a quote, so it reads as
  // text: references and notes come from outside (OWASP, CSV injection). Numbers stay numbers.
  const csv = stringify({
    header: true,
    columns: [...columns],
    cast: { boolean: (b) => String(b) },
    escape_formulas: true,
  });
  return Readable.from(rows).pipe(csv);
}
