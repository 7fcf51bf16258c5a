import { duplicateHolder, GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { CustomerInput } from '../../client/gateway-client.js';
import { observeFinding, observeSession } from '../orders/from-gateway.js';
import type { About } from '../orders/observation.js';
import { withdraw } from './card.js';
import { type CheckoutDeps, inTurn, type PaymentOutcome, reload, standing } from './deps.js';
import { adoptDuplicate } from './duplicate.js';
import { inputRefusal } from './input-refusal.js';
import { declineMessage, unavailability } from './outcome.js';

/**
 * merchant.md, POST /orders/{id}/pay/redirect: a hosted payment session, and the customer sent to
 * its checkout page. The order becomes paid only through what the gateway says afterwards.
 */
export async function payByRedirect(
  deps: CheckoutDeps,
  orderId: string,
  input: { paymentMethod: string; customer?: CustomerInput },
): Promise<PaymentOutcome> {
  return inTurn(deps, orderId, () => redirectPayment(deps, orderId, input));
}

/**
 * The redirect payment itself, for a caller that holds the order's payment turn already (a payment
 * link's visit, which decides in the turn whether to open one): never outside it.
 */
export async function redirectPayment(
  deps: CheckoutDeps,
  orderId: string,
  input: { paymentMethod: string; customer?: CustomerInput },
): Promise<PaymentOutcome> {
  const { order, attempt, previous, replacedChallenges } = await deps.store.orders.startAttempt(orderId, {
    kind: 'redirect',
    paymentMethod: input.paymentMethod,
    maxFailedAttempts: deps.maxFailedAttempts,
  });
  const about: About = { orderId: order.id, attemptId: attempt.id };
  const sourceId = `api:${attempt.id}:session`;
  try {
    const session = (
      await deps.gateways.of(order.merchant_id).createPaymentSession({
        amountMinor: order.amount_minor,
        currency: order.currency as never,
        reference: order.reference,
        paymentMethod: input.paymentMethod,
        customer: input.customer,
        customerReference: order.id,
        successUrl: `${deps.publicBaseUrl}/checkout/return`,
        cancelUrl: `${deps.publicBaseUrl}/checkout/cancel`,
        description: order.description ?? undefined,
      })
    ).data;
    // The session's ids and expiry reach the attempt with its status, in one change.
    const applied = await deps.apply(observeSession(session, 'api', sourceId, deps.clock.now(), about));
    return { kind: 'action', ...standing(applied), url: session.checkout_url };
  } catch (error) {
    if (!(error instanceof GatewayError) && !(error instanceof GatewayNetworkError)) throw error;
    const errors = error instanceof GatewayError ? inputRefusal(error, 'redirect') : null;
    if (errors) {
      await withdraw(deps, order.id, attempt.id, previous, replacedChallenges);
      const { code, message } = error as GatewayError;
      return { kind: 'invalid', ...(await reload(deps, order.id)), code, message, errors };
    }
    const holder = duplicateHolder(error);
    if (holder) return adoptDuplicate(deps, about, holder);
    if (error instanceof GatewayNetworkError && !error.sentNothing) {
      // The session may exist: the shopper's next try is handed it back (ERR_DUPLICATE, adopted).
      deps.logger.warn({ order: order.id, attempt: attempt.id }, 'payment session outcome unknown');
      return { kind: 'unknown', ...(await reload(deps, order.id)) };
    }
    const { code, retryAfterSeconds } = unavailability(error);
    const now = standing(
      await deps.apply(observeFinding(about, { status: 'failed', code }, sourceId, deps.clock.now())),
    );
    // A gateway or provider outage (5xx, no answer) is not a decline: the customer may simply try again.
    if (error instanceof GatewayNetworkError || error.status >= 500) {
      return {
        kind: 'unavailable',
        ...now,
        code,
        message:
          code === 'GATEWAY_BUSY'
            ? 'The payment gateway is busy; nothing was charged. Please try again shortly.'
            : 'The payment provider is not available right now; nothing was charged.',
        retryAfterSeconds,
      };
    }
    const message = code === 'ERR_PROVIDER_REJECTED' ? error.message : declineMessage(code);
    return { kind: 'declined', ...now, code, message };
  }
}

/** The session landings show the order as we know it: the browser's query proves nothing. */
export async function orderOfSession(deps: CheckoutDeps, paymentSessionId: string) {
  const attempt = await deps.store.attempts.by('payment_session_id', paymentSessionId);
  return attempt ? deps.store.orders.find(attempt.order_id) : null;
}
