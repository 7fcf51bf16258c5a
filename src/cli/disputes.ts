import type { Command } from 'commander';
import { disputeView } from '../merchant/http/views.js';
import { DISPUTE_OUTCOMES, type DisputeOutcome } from '../merchant/orders/disputes.js';
import { cliActor, listLimit, noteOf } from './input.js';
import { kitAction } from './kit-session.js';
import { fail, print } from './output.js';

/** `disputes list|lost`: chargebacks of orders, listed, and an open one recorded as lost. */
export function addDisputes(program: Command): void {
  const disputes = program
    .command('disputes')
    .description('chargebacks of orders: open, won (reversed by the gateway) or lost (an operator said so)');

  disputes
    .command('list')
    .description('newest first; JSON on stdout')
    .option('--outcome <outcome>', 'only open, won or lost disputes')
    .option('--limit <n>', 'at most this many (1 to 1000)', '100')
    .action(
      kitAction(async (kit, options: { outcome?: string; limit: string }) => {
        const outcome = options.outcome as DisputeOutcome | undefined;
        if (outcome !== undefined && !DISPUTE_OUTCOMES.includes(outcome))
          return fail(`--outcome: must be open, won or lost (got "${options.outcome}")`);
        const limit = listLimit(options.limit);
        print((await (await kit.store()).disputes.list({ outcome, limit })).map(disputeView));
      }),
    );

  disputes
    .command('lost <id>')
    .description('record an open dispute as lost (the bank ruled for the customer); the order stays disputed')
    .requiredOption('--note <text>', 'what the bank decided (at most 512 characters, no card number)')
    .option('--by <name>', 'who decided (kept with the dispute; default: cli)')
    .action(
      kitAction(async (kit, id: string, options: { note: string; by?: string }) => {
        const note = noteOf(options.note);
        const actor = cliActor(options.by, () => 'cli');
        const outcome = await (await kit.store()).disputes.lose(id, { actor, note });
        const { isDispute } = await import('../merchant/store/index.js');
        if (isDispute(outcome)) return print({ dispute: disputeView(outcome) });
        if (outcome.kind === 'not_found') return fail(`${id}: no dispute has this id`);
        return fail(`${id}: this dispute is ${outcome.dispute.outcome} already`);
      }),
    );
}
