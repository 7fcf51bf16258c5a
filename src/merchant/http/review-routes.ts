import type Router from '@koa/router';
import type { MerchantDeps } from '../checkout/deps.js';
import { HttpError, invalid } from '../errors/http-error.js';
import { merchantFilter } from '../orders/order-merchant.js';
import { auditCsv, auditRow } from '../reports/audit.js';
import { jsonBody, ok, parse, parseQuery } from './errors.js';
import { decodeCursor, encodeCursor } from './list-cursor.js';
import { actorOf, type OpsAuth } from './ops-auth.js';
import { checkOrderScope, listMerchants } from './order-access.js';
import { auditQuerySchema, orderListQuerySchema, reviewSchema } from './schemas.js';
import { orderView } from './views.js';

/**
 * The review queue and the audit export (issue, parts 2 and 3): GET /orders (every role; the queue is
 * `needs_review=true`), POST /orders/{id}/review (finance, admin) and GET /audit (finance, admin).
 */
export function reviewRoutes(router: Router, deps: MerchantDeps & { ops: OpsAuth }): void {
  router.get('/orders', async (ctx) => {
    const who = await deps.ops.require(ctx, 'read');
    const q = parseQuery(orderListQuerySchema, ctx.query);
    // Platform mode: one merchant's orders when the query names it; a scoped credential's merchants' alone.
    const merchants = listMerchants(deps, who, q.merchant_id);
    if (q.created_from && q.created_to && q.created_to.getTime() <= q.created_from.getTime())
      throw invalid({ created_to: ['must be after created_from'] });
    const after = q.cursor === undefined ? null : decodeCursor(q.cursor);
    if (q.cursor !== undefined && !after)
      throw invalid({ cursor: ['is not a cursor this list gave: pass next_cursor as it came'] });
    const page = await deps.store.reviews.list({
      needsReview: q.needs_review,
      statuses: q.status,
      currency: q.currency,
      reference: q.reference,
      createdFrom: q.created_from,
      createdTo: q.created_to,
      after,
      merchants,
      limit: q.limit,
    });
    ok(ctx, {
      orders: page.orders.map(({ order, attempt }) => orderView(order, attempt)),
      next_cursor: page.next ? encodeCursor(page.next) : null,
    });
  });

  router.post('/orders/:id/review', async (ctx) => {
    const who = await deps.ops.require(ctx, 'reviews.resolve');
    const body = parse(reviewSchema, await jsonBody(ctx));
    const actor = actorOf(ctx, who, body.by);
    // An unknown order is the store's OrderNotFound: a 404, as every order route answers; so is
    // another merchant's, to a credential scoped to others.
    await checkOrderScope(deps, who, ctx.params.id!);
    const outcome = await deps.store.reviews.resolve(ctx.params.id!, {
      actor,
      resolution: body.resolution,
      note: body.note,
    });
    if (outcome.kind === 'not_flagged')
      throw new HttpError(
        409,
        'NOT_FLAGGED',
        'The order is not flagged for review: there is nothing to resolve.',
        {
          data: { needs_review: false },
        },
      );
    const attempt = outcome.order.current_attempt_id
      ? await deps.store.attempts.get(outcome.order.current_attempt_id)
      : null;
    ok(ctx, { order: orderView(outcome.order, attempt) }, 200, 'The review is resolved.');
  });

  router.get('/audit', async (ctx) => {
    const who = await deps.ops.require(ctx, 'audit.read');
    const q = parseQuery(auditQuerySchema, ctx.query);
    if (q.to.getTime() <= q.from.getTime()) throw invalid({ to: ['must be after from'] });
    const served = deps.gateways.merchants;
    // A credential scoped to some merchants (platform mode) reads the lines about theirs alone.
    const merchant = who.merchants
      ? listMerchants(deps, who, q.merchant_id)
      : q.merchant_id === undefined
        ? null
        : merchantFilter(q.merchant_id, served);
    const lines = deps.store.audit.between(q.from, q.to, { merchant });
    if (q.format === 'csv') {
      // Streamed a page at a time: a year of acts never sits in memory.
      const whose = q.merchant_id === undefined ? '' : `merchant-${q.merchant_id}-`;
      ctx.set('Content-Disposition', `attachment; filename="audit-${whose}${day(q.from)}-${day(q.to)}.csv"`);
      ctx.type = 'text/csv; charset=utf-8';
      ctx.body = auditCsv(lines, served);
      return;
    }
    const entries = [];
    for await (const line of lines) entries.push(auditRow(line, served));
    ok(ctx, { from: q.from.toISOString(), to: q.to.toISOString(), entries });
  });
}

const day = (d: Date) => d.toISOString().slice(0, 10);
