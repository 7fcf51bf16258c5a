import { GatewayError, GatewayNetworkError } from '../../client/errors.js';
import type { CustomerInput } from '../../client/gateway-client.js';
import { observeFinding, observeSession } from '../orders/from-gateway.js';
import { declineMessage } from './card.js';
import { type CheckoutDeps, type PaymentOutcome, reload } from './deps.js';
import { inputRefusal } from './input-refusal.js';

/**
 * merchant.md, POST /orders/{id}/pay/redirect: a hosted payment session, and the customer sent to
 * its checkout page. The order becomes paid only through what the gateway says afterwards.
 */
export async function payByRedirect(
  deps: CheckoutDeps,
  orderId: string,
  input: { paymentMethod: string; customer?: CustomerInput },
): Promise<PaymentOutcome> {
  const { order, attempt, previous } = await deps.store.orders.startAttempt(orderId, {
    kind: 'redirect',
    paymentMethod: input.paymentMethod,
  });
  try {
    const session = (
      await deps.gateway.createPaymentSession({
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
    const expiresAt = session.expires_at === undefined ? Number.NaN : Date.parse(session.expires_at);
    await deps.store.attempts.setIds(attempt.id, {
      payment_session_id: session.payment_session_id,
      gateway_transaction_id: session.transaction_id,
      // The poller asks right after it: an abandoned session is known expired within seconds.
      ...(Number.isNaN(expiresAt) ? {} : { session_expires_at: new Date(expiresAt) }),
    });
    await deps.apply(observeSession(session, 'api', `api:${attempt.id}:session`, deps.clock.now()));
    return { kind: 'action', order: await reload(deps, order.id), url: session.checkout_url };
  } catch (error) {
    if (!(error instanceof GatewayError) && !(error instanceof GatewayNetworkError)) throw error;
    const errors = error instanceof GatewayError ? inputRefusal(error, 'redirect') : null;
    if (errors) {
      await deps.store.orders.withdrawAttempt(order.id, attempt.id, previous);
      const { code, message } = error as GatewayError;
      return { kind: 'invalid', order: await reload(deps, order.id), code, message, errors };
    }
    const code = error instanceof GatewayError ? error.code : 'GATEWAY_UNAVAILABLE';
    const sourceId = `api:${attempt.id}:session`;
    await deps.apply(observeFinding(attempt.id, { status: 'failed', code }, sourceId, deps.clock.now()));
    const after = await reload(deps, order.id);
    // A gateway or provider outage (5xx, no answer) is not a decline: the customer may simply try again.
    if (error instanceof GatewayNetworkError || error.status >= 500) {
      return {
        kind: 'unavailable',
        order: after,
        code,
        message: 'The payment provider is not available right now; nothing was charged.',
      };
    }
    const message = code === 'ERR_PROVIDER_REJECTED' ? error.message : declineMessage(code);
    return { kind: 'declined', order: after, code, message };
  }
}

/** The session landings show the order as we know it: the browser's query proves nothing. */
export async function orderOfSession(deps: CheckoutDeps, paymentSessionId: string) {
  const attempt = await deps.store.attempts.by('payment_session_id', paymentSessionId);
  return attempt ? deps.store.orders.find(attempt.order_id) : null;
}
