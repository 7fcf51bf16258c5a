import type { PublicPaymentAnswer } from '@merchant-kit/client';
import { type Answer, api, asCustomer, asShopper } from './api.js';
import { payKind } from './form.js';
import { $, fieldValue, say } from './page.js';
import { followPayment, orderToPay } from './payment.js';
import { loadSavedCards } from './saved-cards.js';

/** The order form sent: the order placed (or the one shown paid again), by card or by redirect. */
export async function placeAndPay(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const button = $<HTMLButtonElement>('pay');
  button.disabled = true;
  say('saved-message', '');
  try {
    const order = await orderToPay('form-message');
    if (!order) return;
    say('form-message', `Paying ${order.reference}\u2026`);
    const path = `/orders/${encodeURIComponent(order.id)}/pay/`;
    const byCard = payKind() === 'card';
    // The customer's consent, asked beside the card: only then does the kit keep it, for them alone.
    const save = byCard && $<HTMLInputElement>('save-card').checked;
    const paid: Answer<PublicPaymentAnswer> = byCard
      ? await api(
          'POST',
          `${path}card`,
          {
            mode: fieldValue('mode'),
            // The sandbox approves any future expiry; the card number decides the outcome.
            card: {
              number: fieldValue('card'),
              exp_month: 12,
              exp_year: new Date().getFullYear() + 3,
              cvv: '123',
              name: 'Demo Shopper',
            },
            save_card: save || undefined,
          },
          asShopper(order.id, save ? asCustomer() : undefined),
        )
      : await api(
          'POST',
          `${path}redirect`,
          {
            payment_method: fieldValue('method'),
            customer: { country_code: fieldValue('country').trim().toUpperCase() || undefined },
          },
          asShopper(order.id),
        );
    const stayed = await followPayment(
      paid,
      order.id,
      'form-message',
      byCard ? '3D Secure challenge' : 'payment',
    );
    if (stayed && save) await loadSavedCards();
  } finally {
    button.disabled = false;
  }
}
