import type { Caller } from '../../client/budget.js';
import { type PollerDeps, pollOrder } from '../jobs/poller.js';
import { type MerchantFilter, merchantFilter } from '../orders/order-merchant.js';
import type { ReportCursor, ReportSource, Store } from '../store/index.js';
import {
  type CurrencyTotals,
  type MerchantTotals,
  type ReportRow,
  reportRow,
  totalsByMerchant,
  totalsOf,
} from './reconciliation.js';
import { type UnmatchedSection, unmatchedSection } from './unmatched.js';

export interface ReportRange {
  /** Orders created from here (inclusive)... */
  from: Date;
  /** ...to here (exclusive). */
  to: Date;
  /**
   * One merchant's orders only (platform mode, issue 45); left out, every merchant's. Any merchant
   * id: one the kit no longer acts for still has its orders reported.
   */
  merchantId?: number;
  /** Several merchants' orders (a credential scoped to them); wins over `merchantId`. */
  merchants?: MerchantFilter;
}

export interface Report extends ReportRange {
  generatedAt: string;
  rows: ReportRow[];
  /** Per currency, over every row (all merchants', or the one asked for). */
  totals: CurrencyTotals[];
  /** Per merchant and currency (issue 45): the same figures as `totals`, split by whose orders. */
  totalsByMerchant: MerchantTotals[];
  /**
   * Gateway money with no order first seen in the range, beside the orders (issue 19): of the
   * merchants the report is of (issue 45: the merchant whose endpoint its event came to).
   */
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

/** The merchant the range asks for, as the store reads its orders; null: every merchant's. */
function merchantOfRange(deps: Pick<ReportDeps, 'gateways'>, range: ReportRange): MerchantFilter | null {
  if (range.merchants) return range.merchants;
  return range.merchantId === undefined ? null : merchantFilter(range.merchantId, deps.gateways.merchants);
}

/** The report's rows, a page at a time, oldest order first: what a CSV streams. */
export async function* reportRows(
  deps: Pick<ReportDeps, 'store' | 'clock' | 'authExpiryWarningMs' | 'gateways'>,
  range: ReportRange,
): AsyncGenerator<ReportRow> {
  const expiry = { now: deps.clock.now(), warningMs: deps.authExpiryWarningMs ?? DEFAULT_WARNING_MS };
  const merchant = merchantOfRange(deps, range);
  const served = deps.gateways.merchants;
  for (let after: ReportCursor | null = null; ; ) {
    const page: ReportSource[] = await deps.store.reports.created(
      range.from,
      range.to,
      PAGE,
      after,
      merchant,
    );
    for (const { order, attempt, dispute } of page) yield reportRow(order, attempt, expiry, dispute, served);
    if (page.length < PAGE) return;
    const last = page.at(-1)!.order;
    after = { createdAt: last.created_at, id: last.id };
  }
}

/** The whole report: every order created in the range (of one merchant, or all), totals per currency and per merchant. */
export async function reconciliationReport(
  deps: ReportDeps,
  range: ReportRange,
  options: ReportOptions = {},
): Promise<Report> {
  const progress = options.onProgress ?? (() => {});
  if (options.refresh) await refreshUnmatched(deps, range, options.caller ?? 'report', progress);
  const total = await deps.store.reports.countCreated(range.from, range.to, merchantOfRange(deps, range));
  const rows: ReportRow[] = [];
  for await (const row of reportRows(deps, range)) {
    rows.push(row);
    if (rows.length % 100 === 0 || rows.length === total) progress('reading', rows.length, total);
  }
  return {
    from: range.from,
    to: range.to,
    ...(range.merchantId === undefined ? {} : { merchantId: range.merchantId }),
    generatedAt: new Date(deps.clock.now()).toISOString(),
    rows,
    totals: totalsOf(rows),
    totalsByMerchant: totalsByMerchant(rows),
    unmatched: await unmatchedOf(deps, range),
  };
}

/**
 * The report's gateway money with no order: the range's, of the merchants the report is of (one, a
 * scoped credential's, or every merchant's), filtered as the orders are.
 */
export async function unmatchedOf(
  deps: { store: Pick<Store, 'unmatched'> } & Pick<ReportDeps, 'gateways'>,
  range: ReportRange,
): Promise<UnmatchedSection> {
  return unmatchedSection(deps.store, range, merchantOfRange(deps, range), deps.gateways.merchants);
}

/** Polls, through the one apply path, every order of the range the report would not call matched. */
async function refreshUnmatched(
  deps: ReportDeps,
  range: ReportRange,
  caller: Caller,
  progress: NonNullable<ReportOptions['onProgress']>,
): Promise<void> {
  const targets: ReportSource[] = [];
  const merchant = merchantOfRange(deps, range);
  for (let after: ReportCursor | null = null; ; ) {
    const page = await deps.store.reports.created(range.from, range.to, PAGE, after, merchant);
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
