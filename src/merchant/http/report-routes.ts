import type Router from '@koa/router';
import { z } from 'zod';
import type { MerchantDeps } from '../checkout/deps.js';
import { invalid } from '../errors/http-error.js';
import { reportCsv } from '../reports/csv.js';
import { reconciliationReport, reportRows, unmatchedOf } from '../reports/generate.js';
import { ok, parseQuery } from './errors.js';
import type { OpsAuth } from './ops-auth.js';
import { listMerchants } from './order-access.js';
import { isoTime, merchantFilterQuery } from './schemas.js';

export const reportQuerySchema = z.object({
  /** Orders created from here (inclusive); a date alone is its midnight, UTC. */
  from: isoTime,
  /** To here (exclusive): `from=2026-11-23&to=2026-11-24` is the 23rd. */
  to: isoTime,
  format: z.enum(['json', 'csv'], { message: 'must be json or csv' }).default('json'),
  refresh: z.enum(['true', 'false'], { message: 'must be true or false' }).default('false'),
  /** One merchant's orders (platform mode); left out, every merchant's. */
  merchant_id: merchantFilterQuery,
});

/** The range of a report's query, checked: `to` after `from`. */
export function reportRange(query: Record<string, unknown>) {
  const q = parseQuery(reportQuerySchema, query);
  if (q.to.getTime() <= q.from.getTime()) throw invalid({ to: ['must be after from'] });
  return q;
}

/** merchant.md, HTTP interface: GET /reports/reconciliation (finance; the ops token). */
export function reportRoutes(router: Router, deps: MerchantDeps & { ops: OpsAuth }): void {
  router.get('/reports/reconciliation', async (ctx) => {
    const who = await deps.ops.require(ctx, 'reports.read');
    const q = reportRange(ctx.query);
    // A credential scoped to some merchants (platform mode) reads theirs alone: one it names, or all of them.
    const scoped = who.merchants ? listMerchants(deps, who, q.merchant_id) : null;
    const range = {
      from: q.from,
      to: q.to,
      ...(q.merchant_id === undefined ? {} : { merchantId: q.merchant_id }),
      ...(scoped ? { merchants: scoped } : {}),
    };
    if (q.format === 'csv') {
      // Streamed: a month of orders never sits in memory. A refresh asks the gateway first.
      if (q.refresh === 'true') await reconciliationReport(deps, range, { refresh: true, caller: 'report' });
      const whose = q.merchant_id === undefined ? '' : `merchant-${q.merchant_id}-`;
      ctx.set(
        'Content-Disposition',
        `attachment; filename="reconciliation-${whose}${day(q.from)}-${day(q.to)}.csv"`,
      );
      ctx.type = 'text/csv; charset=utf-8';
      ctx.body = reportCsv(reportRows(deps, range), (await unmatchedOf(deps, range)).rows);
      return;
    }
    const report = await reconciliationReport(deps, range, {
      refresh: q.refresh === 'true',
      caller: 'report',
    });
    ok(ctx, {
      from: report.from.toISOString(),
      to: report.to.toISOString(),
      merchant_id: report.merchantId ?? null,
      generated_at: report.generatedAt,
      totals: report.totals,
      totals_by_merchant: report.totalsByMerchant,
      rows: report.rows,
      unmatched_money: report.unmatched,
    });
  });
}

const day = (d: Date) => d.toISOString().slice(0, 10);
