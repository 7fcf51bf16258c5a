import { merchantFilter } from '../../merchant/orders/order-merchant.js';
import { attachMoney, resolveMoney } from '../../merchant/reconciler/unmatched-actions.js';
import { unmatchedRow } from '../../merchant/reports/unmatched.js';
import { UNMATCHED_RESOLUTIONS, type UnmatchedResolution } from '../../merchant/store/records.js';
import { cliActor, listLimit, merchantId, noteOf } from '../input.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';

/** `unmatched list|attach|resolve` (registered in ../unmatched.ts). */

export async function list(
  kit: KitSession,
  options: { resolution?: string; limit: string; merchant?: string },
) {
  const resolution = options.resolution as UnmatchedResolution | undefined;
  if (resolution !== undefined && !UNMATCHED_RESOLUTIONS.includes(resolution))
    fail(`--resolution: must be open, attached or resolved (got "${options.resolution}")`);
  const limit = listLimit(options.limit);
  const served = kit.config.gateway.merchants;
  // One merchant's money (platform mode): any merchant id, as the report's --merchant.
  const merchants =
    options.merchant === undefined
      ? null
      : merchantFilter(merchantId('--merchant', options.merchant), served);
  const money = await (await kit.store()).unmatched.list({ resolution, merchants, limit });
  print(money.map((m) => unmatchedRow(m, served)));
}

export async function attach(kit: KitSession, id: string, options: { order: string; by?: string }) {
  const actor = cliActor(options.by, () => 'cli');
  const { adapters } = await kit.adapters();
  const outcome = await attachMoney(adapters.checkout, id, options.order, actor);
  switch (outcome.kind) {
    case 'attached':
      print({
        unmatched_money: unmatchedRow(outcome.money, kit.config.gateway.merchants),
        order: {
          id: outcome.order.id,
          status: outcome.order.status,
          needs_review: outcome.order.needs_review,
          review_reason: outcome.order.review_reason,
        },
      });
      return;
    case 'not_found':
      return fail(`${id}: no gateway money with no order has this id`);
    case 'not_open':
      return fail(`${id}: this money is ${outcome.money.resolution} already`);
    case 'no_order':
      return fail(`--order: no order has the id ${options.order}`);
    case 'refused':
      return fail(`--order: the order ${outcome.message}`);
    case 'order_changed':
      return fail('--order: the order took another payment meanwhile; nothing was done: try again');
    default:
      return outcome satisfies never;
  }
}

export async function resolve(kit: KitSession, id: string, options: { note: string; by?: string }) {
  const note = noteOf(options.note);
  const actor = cliActor(options.by, () => 'cli');
  const outcome = await resolveMoney({ store: await kit.store() }, id, note, actor);
  switch (outcome.kind) {
    case 'resolved':
      print({ unmatched_money: unmatchedRow(outcome.money, kit.config.gateway.merchants) });
      return;
    case 'not_found':
      return fail(`${id}: no gateway money with no order has this id`);
    case 'not_open':
      return fail(`${id}: this money is ${outcome.money.resolution} already`);
    default:
      return outcome satisfies never;
  }
}
