import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { REPORT_COLUMNS, type ReportRow } from './reconciliation.js';

/**
 * The report as CSV (csv-stringify: quoting, escaping and line ends done right): one header line of
 * the stable column names, `true`/`false`, empty for null. Streams: rows can come page by page.
 */
export function reportCsv(rows: AsyncIterable<ReportRow> | Iterable<ReportRow>): Readable {
  const csv = stringify({ header: true, columns: [...REPORT_COLUMNS], cast: { boolean: (b) => String(b) } });
  return Readable.from(rows).pipe(csv);
}
