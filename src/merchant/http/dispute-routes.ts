import type Router from '@koa/router';
import type { MerchantDeps } from '../checkout/deps.js';
import { HttpError } from '../errors/http-error.js';
import { isDispute } from '../store/index.js';
import { jsonBody, ok, parse, parseQuery } from './errors.js';
import { actorOf, type OpsAuth } from './ops-auth.js';
import { listMerchants, seesMerchant } from './order-access.js';
import { disputeListQuerySchema, loseDisputeSchema } from './schemas.js';
import { disputeView } from './views.js';

const noDispute = () =>
  new HttpError(404, 'NOT_FOUND', 'No dispute has this id.', {
    errors: { id: ['is not the id of any dispute'] },
  });

/**
 * Disputes (issue 19, part 2): the list (every role reads it), and closing one `lost` (finance, admin). The
 * gateway opens and wins them (a chargeback, its reversal, through the apply path); a loss is a
 * person's word, since the gateway says nothing more of one.
 */
export function disputeRoutes(router: Router, deps: MerchantDeps & { ops: OpsAuth }): void {
  router.get('/disputes', async (ctx) => {
    const who = await deps.ops.require(ctx, 'read');
    const q = parseQuery(disputeListQuerySchema, ctx.query);
    const disputes = await deps.store.disputes.list({
      outcome: q.outcome,
      merchants: listMerchants(deps, who, q.merchant_id),
      limit: q.limit,
    });
    ok(ctx, { disputes: disputes.map(disputeView) });
  });

  router.post('/disputes/:id/lost', async (ctx) => {
    const who = await deps.ops.require(ctx, 'disputes.decide');
    const body = parse(loseDisputeSchema, await jsonBody(ctx));
    // A dispute of another merchant's order, to a credential scoped to others: no dispute at all.
    if (who.merchants) {
      const dispute = await deps.store.disputes.get(ctx.params.id!);
      const order = dispute && (await deps.store.orders.find(dispute.order_id));
      if (order && !seesMerchant(deps, who, order.merchant_id)) throw noDispute();
    }
    const outcome = await deps.store.disputes.lose(ctx.params.id!, {
      actor: actorOf(ctx, who, body.by),
      note: body.note,
    });
    if (isDispute(outcome)) return ok(ctx, { dispute: disputeView(outcome) }, 200, 'The dispute is lost.');
    if (outcome.kind === 'not_found') throw noDispute();
    throw new HttpError(
      409,
      'INVALID_STATE',
      `This dispute is ${outcome.dispute.outcome} already: only an open one can be lost.`,
      { data: { outcome: outcome.dispute.outcome, allowed: ['open'] } },
    );
  });
}
