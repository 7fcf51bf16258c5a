import type { duplicateHolder } from '../../client/errors.js';
import type { About } from '../orders/observation.js';
import { askGateway } from './ask.js';
import { type CheckoutDeps, type PaymentOutcome, reload, standing } from './deps.js';
import { outcomeOf } from './outcome.js';

/** A session the shopper can still be sent to: its hosted page is open. */
const LIVE_SESSION = new Set(['created', 'pending_redirect']);

/**
 * ERR_DUPLICATE is news, not a decline (issue 18): the gateway already holds a payment for this
 * order's reference, made by a call whose answer the kit never heard (it died, or the answer was
 * lost). The attempt adopts it: the gateway is asked where it stands (its session when named,
 * sandbox.md section 11; else its transaction) and the answer is applied to the attempt, with its
 * ids, through the one apply path. A paid payment pays the order; a live session is handed back to
 * the shopper; anything still pending leaves the order waiting for the poller and the webhook.
 */
export async function adoptDuplicate(
  deps: CheckoutDeps,
  about: About,
  holder: NonNullable<ReturnType<typeof duplicateHolder>>,
): Promise<PaymentOutcome> {
  const asked = await askGateway(
    deps,
    {
      orderId: about.orderId,
      // Rare (a reference taken): the order is read again for whose gateway to ask.
      merchantId: (await deps.store.orders.find(about.orderId))?.merchant_id ?? null,
      attemptId: about.attemptId,
      transactionId: holder.transactionId,
      paymentSessionId: holder.paymentSessionId,
      open: true,
      ...(about.ids ? { ids: about.ids } : {}),
    },
    { source: 'api', sourceId: `api:${about.attemptId}:duplicate`, caller: 'checkout', adopt: true },
  );
  switch (asked.kind) {
    case 'answered': {
      // An attempt another one superseded (a 3DS return of an abandoned try) takes nothing: the
      // payment belongs to the current one. The shopper sees where the order stands.
      if (!asked.applied.matched) return { kind: 'done', ...(await reload(deps, about.orderId)) };
      const now = standing(asked.applied);
      const { status } = now.order;
      if (asked.session && status === 'requires_action' && LIVE_SESSION.has(asked.session.status))
        return { kind: 'action', ...now, url: asked.session.checkout_url };
      if (status === 'pending' || status === 'requires_action') return { kind: 'in_progress', ...now };
      return outcomeOf(asked.applied);
    }
    case 'unknown':
      return { kind: 'in_progress', ...(await reload(deps, about.orderId)) };
    case 'unreachable':
    case 'nothing':
      deps.logger.warn(
        { order: about.orderId, attempt: about.attemptId, transaction: holder.transactionId },
        'the gateway holds a payment for this order; its status could not be read: the webhook will settle it',
      );
      return { kind: 'in_progress', ...(await reload(deps, about.orderId)) };
    default:
      return asked satisfies never;
  }
}
