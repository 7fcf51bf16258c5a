import type { Logger } from 'pino';
import { type CheckoutDeps, reload } from '../checkout/deps.js';
import { observeFinding } from '../orders/from-gateway.js';
import type { Store } from '../store/index.js';

/** What an attempt the kit's own death cut off ends with: not the payer's doing (attempt-cap.ts). */
export const CUT_OFF_CODE = 'PAYMENT_CUT_OFF';
/** How long an attempt stays unanswered before it may be ended: the 3DS hold's 15 minutes. */
export const CUT_OFF_AFTER_MS = 15 * 60_000;
/** A call in flight when recovery began listing has ended by this long after (the client's timeouts). */
export const IN_FLIGHT_MS = 2 * 60_000;

export interface CutOffDeps {
  store: Pick<Store, 'polls' | 'inbox'>;
  checkout: CheckoutDeps;
  logger: Logger;
}

/**
 * Payments the kit's own death cut off: the process died after storing the attempt and before the
 * gateway's answer was recorded (a sale's call, a 3DS return whose card data it had taken). The
 * attempt has no transaction or session id, so nothing polls it and no answer will name it; its order
 * waits for ever, the shopper told it is being confirmed. A recovery run that began at `listedAt` and
 * stored every event it listed has shown what the gateway holds: a call that reached it has an event
 * there, stored and, once the inbox holds nothing unapplied since, applied to its attempt by
 * reference. An attempt still without an id, last changed before the run (less a call's time in
 * flight) and more than 15 minutes ago, never reached the gateway: it fails with PAYMENT_CUT_OFF, and
 * the order takes a new attempt. Should the gateway name it after all, the order is flagged for
 * review, as money on an ended attempt always is. Returns how many ended.
 */
export async function endCutOffPayments(deps: CutOffDeps, listedAt: number): Promise<number> {
  const now = deps.checkout.clock.now();
  // What the run stored may not be applied yet: it may be what gives one of these attempts its id.
  if (await deps.store.inbox.unprocessedSince(new Date(listedAt - CUT_OFF_AFTER_MS))) return 0;
  const before = new Date(Math.min(listedAt - IN_FLIGHT_MS, now - CUT_OFF_AFTER_MS));
  let ended = 0;
  for (const { order, attempt } of await deps.store.polls.unanswered(before, 100)) {
    const about = { orderId: order.id, attemptId: attempt.id };
    // In the order's turn: a shopper paying again meanwhile goes first (busy: the next run looks again),
    // and the attempt is read again inside it, in case its answer came after all.
    const done = await deps.checkout.turns.one(order.id, async () => {
      const standing = await reload(deps.checkout, order.id);
      const still = standing.attempt;
      if (
        standing.order.current_attempt_id !== attempt.id ||
        !still ||
        still.gateway_transaction_id !== null ||
        still.payment_session_id !== null ||
        still.updated_at.getTime() !== attempt.updated_at.getTime()
      )
        return false;
      const finding = { status: 'failed' as const, code: CUT_OFF_CODE };
      const applied = await deps.checkout.apply(
        observeFinding(about, finding, `recovery:${attempt.id}:cut-off`, now, 'recovery'),
      );
      return applied.matched && applied.decision?.outcome === 'applied';
    });
    if (done !== true) continue;
    ended += 1;
    deps.logger.warn(
      { order: order.id, attempt: attempt.id, since: attempt.updated_at.toISOString() },
      'payment cut off before the gateway had it (the kit stopped, or its call never arrived): the gateway has no record of it; the order takes a new attempt',
    );
  }
  return ended;
}
