import type { Context } from 'koa';
import { type CurrencyCode, formatMoney, parseMajor } from '../../shared/money.js';
import type { MerchantDeps } from '../checkout/deps.js';
import type { ErasureSummary } from '../customers/erasure.js';
import { cardExpired, cardRefusal, customerIdProblem } from '../customers/saved-card.js';
import { HttpError, invalid } from '../errors/http-error.js';
import type { Actor } from '../operators/roles.js';
import { customersOf } from '../orders/order-merchant.js';
import type { OrderRecord, SavedCardRecord } from '../store/records.js';

/**
 * Saved cards at the HTTP edge (issue 21): how one is shown, found for a customer, and checked before
 * it pays. Shared by the storefront's payment route and the customer routes.
 */

/** How the storefront and operators see a saved card: never a number, never the vault token. */
export function savedCardView(card: SavedCardRecord, now: number) {
  return {
    id: card.id,
    customer_id: card.customer_id,
    brand: card.brand,
    last4: card.last4,
    exp_month: card.exp_month,
    exp_year: card.exp_year,
    expired: cardExpired(card, now),
    status: card.status,
    created_at: card.created_at.toISOString(),
    revoked_at: card.revoked_at?.toISOString() ?? null,
  };
}

/** What an erasure did (issue 43), as `POST /customers/{id}/erase` and `cli customers erase` say it. */
export function erasureView(s: ErasureSummary) {
  return {
    customer: { reference: s.reference, erased_at: s.erasedAt.toISOString() },
    orders: s.orders,
    saved_cards: { revoked_at_gateway: s.cardsRevoked, removed: s.cardsRemoved },
    webhook_events: s.webhookEvents,
    order_events: s.orderEvents,
    held_payments: s.heldPayments,
    audit_lines: s.auditLines,
  };
}

/** The customer id of a path, checked: it is kept, logged and sent to the gateway. */
export function customerIdOf(ctx: Context): string {
  const id = ctx.params.id ?? '';
  const problem = customerIdProblem(id);
  if (problem) throw invalid({ customer_id: [problem] });
  return id;
}

/**
 * A saved card of this customer's (of this merchant's, null: the kit's first), or 404: another
 * customer's card, or another merchant's customer's of the same id, is to this one no card at all.
 */
export async function customersCard(
  deps: Pick<MerchantDeps, 'store' | 'gateways'>,
  customerId: string,
  cardId: string,
  merchantId: number | null,
): Promise<SavedCardRecord> {
  const card = await deps.store.savedCards.ofCustomer(
    customerId,
    cardId,
    customersOf(merchantId, deps.gateways.merchants),
  );
  if (!card)
    throw new HttpError(404, 'CARD_NOT_FOUND', 'This customer has no saved card with this id.', {
      errors: { card: ["is not one of this customer's saved cards"] },
    });
  return card;
}

/** A card that can pay now: not removed, not past its expiry month. 422 naming `card` otherwise. */
export function usable(card: SavedCardRecord, now: number): SavedCardRecord {
  const refusal = cardRefusal(card, now);
  if (refusal) throw new HttpError(422, refusal.code, refusal.message, { errors: { card: [refusal.field] } });
  return card;
}

/** The customer an order names, for a payment that uses or saves their cards; 422 naming `field` if none. */
export function customerIdOfOrder(order: OrderRecord, field: 'card' | 'save_card'): string {
  const customerId = order.customer?.merchant_customer_id;
  if (typeof customerId !== 'string')
    throw invalid({
      [field]: [
        'needs an order that names its customer: create the order with customer.merchant_customer_id',
      ],
    });
  return customerId;
}

/**
 * A saved card about to pay an order with the shopper there, counted against what the customer's
 * cards may pay in 24 hours (SAVED_CARD_DAILY_PAYMENTS, SAVED_CARD_DAILY_AMOUNT) and written to the
 * audit log with the credential that vouched (`actor`). Past the bound, 409 `SAVED_CARD_LIMIT`: an
 * operator charges it (POST /customers/{id}/charges, audited as theirs).
 */
export async function vouchSavedCardPayment(
  deps: Pick<MerchantDeps, 'store' | 'savedCardBounds' | 'gateways'>,
  p: { order: OrderRecord; customerId: string; card: SavedCardRecord; actor: Actor },
): Promise<void> {
  const currency = p.order.currency as CurrencyCode;
  const amount = parseMajor(deps.savedCardBounds.dailyAmount, currency);
  if (!amount.ok) throw new Error(`SAVED_CARD_DAILY_AMOUNT does not fit ${currency}`);
  const vouched = await deps.store.savedCards.vouchPayment({
    customerId: p.customerId,
    cardId: p.card.id,
    orderId: p.order.id,
    amountMinor: p.order.amount_minor,
    currency,
    actor: p.actor,
    bound: { payments: deps.savedCardBounds.dailyPayments, amountMinor: amount.minor },
    // The order's merchant's customer: their cards' payments alone count.
    merchant: customersOf(p.order.merchant_id, deps.gateways.merchants),
  });
  if (vouched.kind === 'vouched') return;
  const most = `${deps.savedCardBounds.dailyPayments} payments or ${formatMoney(amount.minor, currency)}`;
  throw new HttpError(
    409,
    'SAVED_CARD_LIMIT',
    `This payment would take the customer's saved cards past what they may pay in 24 hours with the shopper alone (${most}; ${vouched.payments} paid, ${formatMoney(vouched.amountMinor, currency)}): an operator must charge this one (POST /customers/{id}/charges). Nothing was charged.`,
    {
      data: {
        payments: vouched.payments,
        amount: vouched.amountMinor,
        currency,
        most_payments: deps.savedCardBounds.dailyPayments,
        most_amount: amount.minor,
      },
    },
  );
}
