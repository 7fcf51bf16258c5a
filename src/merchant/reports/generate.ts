import type { Caller } from '../../client/budget.js';
import { type PollerDeps, pollOrder } from '../jobs/poller.js';
import type { ReportCursor, ReportSource, Store } from '../store/index.js';
import { type CurrencyTotals, type ReportRow, reportRow, totalsOf } from './reconciliation.js';
import { type UnmatchedSection, unmatchedSection } from './unmatched.js';

export interface ReportRange {
  /** Orders created from here (inclusive)... */
  from: Date;
  /** ...to here (exclusive). */
  to: Date;
}

export interface Report extends ReportRange {
  generatedAt: string;
  rows: ReportRow[];
  totals: CurrencyTotals[];
  /** Gateway money with no order first seen in the range, beside the orders (issue 19). */
  unmatched: UnmatchedSection;
}

export interface ReportDeps extends PollerDeps {
  store: PollerDeps['store'] & Pick<Store, 'reports' | 'unmatched'>;
  /** AUTH_EXPIRY_WARNING: rows of authorisations that lapse within it have the reason `auth_expiring`. */
  authExpiryWarningMs?: number;
}

export interface ReportOptions {
  /**
   * Ask the gateway first about every order not matched (within the shared budget, as `caller`), so
   * the report shows what it says now rather than what it last said.
   */
  refresh?: boolean;
  caller?: Caller;
  /** Told as the report goes (a progress bar): asking the gateway, then reading the orders. */
  onProgress?: (phase: 'refreshing' | 'reading', done: number, total: number) => void;
}

const PAGE = 500;
/** AUTH_EXPIRY_WARNING's default, 48 hours, for a caller that does not say. */
const DEFAULT_WARNING_MS = 48 * 3_600_000;

/** The report's rows, a page at a time, oldest order first: what a CSV streams. */
export async function* reportRows(
  deps: Pick<ReportDeps, 'store' | 'clock' | 'authExpiryWarningMs'>,
  range: ReportRange,
): AsyncGenerator<ReportRow> {
  const expiry = { now: deps.clock.now(), warningMs: deps.authExpiryWarningMs ?? DEFAULT_WARNING_MS };
  for (let after: ReportCursor | null = null; ; ) {
    const page: ReportSource[] = await deps.store.reports.created(range.from, range.to, PAGE, after);
    for (const { order, attempt, dispute } of page) yield reportRow(order, attempt, expiry, dispute);
    if (page.length < PAGE) return;
    const last = page.at(-1)!.order;
    after = { createdAt: last.created_at, id: last.id };
  }
}

/** The whole report: every order created in the range, and totals per currency. */
export async function reconciliationReport(
  deps: ReportDeps,
  range: ReportRange,
  options: ReportOptions = {},
): Promise<Report> {
  const progress = options.onProgress ?? (() => {});
  if (options.refresh) await refreshUnmatched(deps, range, options.caller ?? 'report', progress);
  const total = await deps.store.reports.countCreated(range.from, range.to);
  const rows: ReportRow[] = [];
  for await (const row of reportRows(deps, range)) {
    rows.push(row);
    if (rows.length % 100 === 0 || rows.length === total) progress('reading', rows.length, total);
  }
  return {
    from: range.from,
    to: range.to,
    generatedAt: new Date(deps.clock.now()).toISOString(),
    rows,
    totals: totalsOf(rows),
    unmatched: await unmatchedSection(deps.store, range),
  };
}

/** Polls, through the one apply path, every order of the range the report would not call matched. */
async function refreshUnmatched(
  deps: ReportDeps,
  range: ReportRange,
  caller: Caller,
  progress: NonNullable<ReportOptions['onProgress']>,
): Promise<void> {
  const targets: ReportSource[] = [];
  for (let after: ReportCursor | null = null; ; ) {
    const page = await deps.store.reports.created(range.from, range.to, PAGE, after);
    for (const source of page) {
      const { attempt } = source;
      const atGateway =
        attempt && (attempt.gateway_transaction_id !== null || attempt.payment_session_id !== null);
      if (atGateway && !reportRow(source.order, attempt).match) targets.push(source);
    }
    if (page.length < PAGE) break;
    const last = page.at(-1)!.order;
    after = { createdAt: last.created_at, id: last.id };
  }
  for (const [i, target] of targets.entries()) {
    const polled = await pollOrder(deps, { order: target.order, attempt: target.attempt! }, caller);
    progress('refreshing', i + 1, targets.length);
    if (polled.gatewayDown) {
      // Every other order would fail the same way: the report shows what the kit knows.
      deps.logger.warn(
        { err: { message: polled.gatewayDown.message }, not_asked: targets.length - i - 1 },
        'report refresh stopped: the gateway does not answer; the report shows what the kit last heard',
      );
      return;
    }
  }
}
