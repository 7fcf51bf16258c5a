import { disputeView } from '../../merchant/http/views.js';
import { DISPUTE_OUTCOMES, type DisputeOutcome } from '../../merchant/orders/disputes.js';
import { isDispute } from '../../merchant/store/index.js';
import { cliActor, listLimit, noteOf } from '../input.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';

/** `disputes list|lost` (registered in ../disputes.ts). */

export async function list(kit: KitSession, options: { outcome?: string; limit: string }) {
  const outcome = options.outcome as DisputeOutcome | undefined;
  if (outcome !== undefined && !DISPUTE_OUTCOMES.includes(outcome))
    return fail(`--outcome: must be open, won or lost (got "${options.outcome}")`);
  const limit = listLimit(options.limit);
  print((await (await kit.store()).disputes.list({ outcome, limit })).map(disputeView));
}

export async function lost(kit: KitSession, id: string, options: { note: string; by?: string }) {
  const note = noteOf(options.note);
  const actor = cliActor(options.by, () => 'cli');
  const outcome = await (await kit.store()).disputes.lose(id, { actor, note });
  if (isDispute(outcome)) return print({ dispute: disputeView(outcome) });
  if (outcome.kind === 'not_found') return fail(`${id}: no dispute has this id`);
  return fail(`${id}: this dispute is ${outcome.dispute.outcome} already`);
}
