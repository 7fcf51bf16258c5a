import type Router from '@koa/router';
import type { MerchantDeps } from '../checkout/deps.js';
import { HttpError, invalid } from '../errors/http-error.js';
import { attachMoney, resolveMoney } from '../reconciler/unmatched-actions.js';
import { unmatchedRow } from '../reports/unmatched.js';
import type { UnmatchedMoneyRecord } from '../store/records.js';
import { jsonBody, ok, parse, parseQuery } from './errors.js';
import { actorOf, type OpsAuth, type Principal } from './ops-auth.js';
import { listMerchants, seesMerchant } from './order-access.js';
import { attachSchema, resolveSchema, unmatchedListQuerySchema } from './schemas.js';
import { orderView } from './views.js';

const notFound = () =>
  new HttpError(404, 'NOT_FOUND', 'No gateway money with no order has this id.', {
    errors: { id: ['is not the id of any gateway money with no order'] },
  });

const notOpen = (money: UnmatchedMoneyRecord) =>
  new HttpError(409, 'INVALID_STATE', `This money is ${money.resolution} already: only open money can be.`, {
    data: { resolution: money.resolution, allowed: ['open'] },
  });

/**
 * Gateway money with no order (issue 19, part 1): the list (every role reads it), attaching money to
 * an order (the apply path) and resolving it with a note (finance, admin).
 *
 * Each row is the merchant's whose endpoint its event came to (issue 45): a credential scoped to some
 * merchants lists theirs alone, and meets another merchant's money, or order, as unknown ones.
 */
export function unmatchedRoutes(router: Router, deps: MerchantDeps & { ops: OpsAuth }): void {
  /** Whose money and orders `who` may see: its scope's merchants (an unscoped credential, all). */
  const sees = (who: Principal) => (merchantId: number | null) => seesMerchant(deps, who, merchantId);

  router.get('/unmatched-money', async (ctx) => {
    const who = await deps.ops.require(ctx, 'read');
    const q = parseQuery(unmatchedListQuerySchema, ctx.query);
    const money = await deps.store.unmatched.list({
      resolution: q.resolution,
      merchants: listMerchants(deps, who, q.merchant_id),
      limit: q.limit,
    });
    ok(ctx, { unmatched_money: money.map((m) => unmatchedRow(m, deps.gateways.merchants)) });
  });

  router.post('/unmatched-money/:id/attach', async (ctx) => {
    const who = await deps.ops.require(ctx, 'unmatched.decide');
    const body = parse(attachSchema, await jsonBody(ctx));
    const outcome = await attachMoney(
      deps,
      ctx.params.id!,
      body.order_id,
      actorOf(ctx, who, body.by),
      sees(who),
    );
    switch (outcome.kind) {
      case 'attached':
        return ok(
          ctx,
          {
            unmatched_money: unmatchedRow(outcome.money, deps.gateways.merchants),
            order: orderView(outcome.order, outcome.attempt),
          },
          200,
          'Attached: the payment was applied to the order.',
        );
      case 'not_found':
        throw notFound();
      case 'not_open':
        throw notOpen(outcome.money);
      case 'no_order':
        throw invalid({ order_id: ['is not the id of any order'] });
      case 'refused':
        if (outcome.status === 422) throw invalid({ order_id: [outcome.message] });
        throw new HttpError(409, outcome.code, `The order ${outcome.message}.`, {
          errors: { order_id: [outcome.message] },
        });
      case 'order_changed':
        throw new HttpError(
          409,
          'ORDER_CHANGED',
          'The order took another payment while this one was being attached; nothing was done. Read the order and try again.',
          { errors: { order_id: ['changed while the money was being attached'] } },
        );
      default:
        return outcome satisfies never;
    }
  });

  router.post('/unmatched-money/:id/resolve', async (ctx) => {
    const who = await deps.ops.require(ctx, 'unmatched.decide');
    const body = parse(resolveSchema, await jsonBody(ctx));
    const outcome = await resolveMoney(
      deps,
      ctx.params.id!,
      body.note,
      actorOf(ctx, who, body.by),
      sees(who),
    );
    switch (outcome.kind) {
      case 'resolved':
        return ok(
          ctx,
          { unmatched_money: unmatchedRow(outcome.money, deps.gateways.merchants) },
          200,
          'Resolved.',
        );
      case 'not_found':
        throw notFound();
      case 'not_open':
        throw notOpen(outcome.money);
      default:
        return outcome satisfies never;
    }
  });
}
