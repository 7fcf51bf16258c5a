import type { Command } from 'commander';
import { unmatchedRow } from '../merchant/reports/unmatched.js';
import { UNMATCHED_RESOLUTIONS, type UnmatchedResolution } from '../merchant/store/records.js';
import { cliActor, listLimit, noteOf } from './input.js';
import { kitAction } from './kit-session.js';
import { fail, print } from './output.js';

/**
 * `unmatched list|attach|resolve`: gateway money with no order, listed, applied to an order through
 * the apply path, or resolved with a note.
 */
export function addUnmatched(program: Command): void {
  const unmatched = program
    .command('unmatched')
    .description('gateway money with no order: transactions no payment attempt holds, kept for an operator');

  unmatched
    .command('list')
    .description('newest first; JSON on stdout')
    .option('--resolution <resolution>', 'only open, attached or resolved money')
    .option('--limit <n>', 'at most this many (1 to 1000)', '100')
    .action(
      kitAction(async (kit, options: { resolution?: string; limit: string }) => {
        const resolution = options.resolution as UnmatchedResolution | undefined;
        if (resolution !== undefined && !UNMATCHED_RESOLUTIONS.includes(resolution))
          fail(`--resolution: must be open, attached or resolved (got "${options.resolution}")`);
        const limit = listLimit(options.limit);
        const money = await (await kit.store()).unmatched.list({ resolution, limit });
        print(money.map(unmatchedRow));
      }),
    );

  unmatched
    .command('attach <id>')
    .description("apply the money to an order through the apply path: the order's payment (JSON on stdout)")
    .requiredOption('--order <order_id>', 'the order the money belongs to')
    .option('--by <name>', 'who decided (kept with the money; default: cli)')
    .action(
      kitAction(async (kit, id: string, options: { order: string; by?: string }) => {
        const actor = cliActor(options.by, () => 'cli');
        const { attachMoney } = await import('../merchant/reconciler/unmatched-actions.js');
        const { adapters } = await kit.adapters();
        const outcome = await attachMoney(adapters.checkout, id, options.order, actor);
        switch (outcome.kind) {
          case 'attached':
            print({
              unmatched_money: unmatchedRow(outcome.money),
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
      }),
    );

  unmatched
    .command('resolve <id>')
    .description('resolve the money with a note (what was found); it leaves the open list')
    .requiredOption('--note <text>', 'what was found (at most 512 characters, no card number)')
    .option('--by <name>', 'who decided (kept with the money; default: cli)')
    .action(
      kitAction(async (kit, id: string, options: { note: string; by?: string }) => {
        const note = noteOf(options.note);
        const actor = cliActor(options.by, () => 'cli');
        const { resolveMoney } = await import('../merchant/reconciler/unmatched-actions.js');
        const outcome = await resolveMoney({ store: await kit.store() }, id, note, actor);
        switch (outcome.kind) {
          case 'resolved':
            print({ unmatched_money: unmatchedRow(outcome.money) });
            return;
          case 'not_found':
            return fail(`${id}: no gateway money with no order has this id`);
          case 'not_open':
            return fail(`${id}: this money is ${outcome.money.resolution} already`);
          default:
            return outcome satisfies never;
        }
      }),
    );
}
