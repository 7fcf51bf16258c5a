import type { CreatedOrder, PublicPaymentAnswer } from '@merchant-kit/client';
import { type Answer, answerLost, api, problem } from './api.js';
import { saveChoices } from './form.js';
import { currentOrder, type ShownOrder, showOrder } from './order.js';
import { $, CUSTOMER, fieldValue, pickedMerchant, say } from './page.js';
import { isOwn, keepOwn, keepSecret, ownMerchant, remember } from './storage.js';

/**
 * What every way of paying shares: the order to pay (a new one from the form, or the one shown again
 * when its payment failed or its answer was lost), and a payment's answer followed.
 */

/** POST /orders from the form's amount and currency, for the signed-in customer; null (and said) if refused. */
async function createOrder(messageId: string): Promise<CreatedOrder | null> {
  say(messageId, 'Creating the order\u2026');
  // Platform mode: the order is for the merchant picked (the kit requires one when it acts for several).
  const merchant = pickedMerchant();
  const created = await api<{ order: CreatedOrder }>('POST', '/orders', {
    amount: fieldValue('amount').trim(),
    currency: fieldValue('currency'),
    description: 'Demo shop order',
    customer: { merchant_customer_id: CUSTOMER.id },
    merchant_id: merchant ?? undefined,
  });
  const order = created.body.data?.order;
  if (created.status !== 201 || !order) {
    say(messageId, `The order was refused: ${problem(created)}`, 'err');
    return null;
  }
  // Answered this once: the order's reads and payments need it (asShopper).
  keepSecret(order.id, order.client_secret);
  remember(order.id);
  // The creator's answer names the customer: the one GET /orders/{id} shows only to operators.
  const customer = order.customer;
  if (customer && !('erased' in customer) && customer.merchant_customer_id === CUSTOMER.id)
    keepOwn(order.id, false, order.merchant_id ?? merchant ?? undefined);
  saveChoices();
  return order;
}

/** A payment's answer: an attempt stands at the gateway unless nothing was started (or may, if it was lost). */
function notePayment(orderId: string, answer: Answer): void {
  const started =
    answer.status === 200 ||
    answer.status === 202 ||
    answer.body.code === 'PAYMENT_IN_PROGRESS' ||
    answerLost(answer);
  if (started && isOwn(orderId)) keepOwn(orderId, true);
}

/**
 * A payment's answer: off to the page it names (a challenge, a hosted checkout), or said, and the order
 * shown as it now stands. False when the browser is leaving the page.
 */
export async function followPayment(
  paid: Answer<PublicPaymentAnswer>,
  orderId: string,
  messageId: string,
  pageName: string,
): Promise<boolean> {
  notePayment(orderId, paid);
  const next = paid.body.data?.next_action;
  if (next && next.type === 'redirect' && /^https?:/.test(next.url)) {
    say(messageId, `Going to the ${pageName} page\u2026`);
    location.assign(next.url);
    return false;
  }
  // In progress is not a failure: the gateway holds a payment for the order whose outcome is coming.
  if (paid.body.code === 'PAYMENT_IN_PROGRESS') say(messageId, paid.body.message ?? '', 'wait');
  else if (answerLost(paid))
    say(
      messageId,
      `${paid.status === 0 ? 'The kit did not answer' : `The kit failed before answering (${paid.status})`}: the payment may or may not have gone through. The order below shows where it stands; while it is unpaid, paying again pays this same order, not a new one.`,
      'err',
    );
  else if (paid.status >= 400) say(messageId, `The payment did not go through: ${problem(paid)}`, 'err');
  else if (paid.status === 202)
    say(messageId, 'The outcome is not known yet; the order will be updated.', 'wait');
  else say(messageId, 'Done.', 'ok');
  await showOrder(orderId, true);
  return true;
}

/** Statuses whose order takes another payment attempt (the spec's pending, failed, cancelled, expired). */
const PAYABLE: readonly string[] = ['pending', 'failed', 'cancelled', 'expired'];

/**
 * The order shown when the customer may pay it again: placed here for them, for the form's amount,
 * currency and merchant, and pending (never paid, or its payment's answer was lost) or ended unpaid.
 * A new order for the same purchase would be a new reference, so a second charge if the first payment
 * went through; the same order again is adopted by the kit (the gateway's ERR_DUPLICATE on its
 * reference) or told to wait (PAYMENT_IN_PROGRESS). Null when the form asks for another purchase.
 */
function orderToRetry(): ShownOrder | null {
  const o = currentOrder();
  if (!o || !isOwn(o.id) || !PAYABLE.includes(o.status) || o.currency !== fieldValue('currency')) return null;
  // Another merchant picked is another purchase (platform mode).
  const merchant = pickedMerchant();
  if (merchant !== null && ownMerchant(o.id) !== merchant) return null;
  return Number(fieldValue('amount').trim()) === Number(o.amount_formatted) ? o : null;
}

/** The pay button says whether it pays the order shown again or places a new one. */
export function showPayLabel(): void {
  $('pay').textContent = orderToRetry() ? 'Pay this order again' : 'Place the order and pay';
}

/** The order to pay: the one shown, again, when it is the customer's to pay; else a new one from the form. */
export async function orderToPay(messageId: string): Promise<ShownOrder | CreatedOrder | null> {
  const again = orderToRetry();
  if (!again) return createOrder(messageId);
  remember(again.id);
  saveChoices();
  return again;
}
