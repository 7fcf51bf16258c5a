import type { Context } from 'koa';
import type { MerchantDeps } from '../checkout/deps.js';
import { cardExpired, cardRefusal, customerIdProblem } from '../customers/saved-card.js';
import { HttpError, invalid } from '../errors/http-error.js';
import type { SavedCardRecord } from '../store/records.js';

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

/** The customer id of a path, checked: it is kept, logged and sent to the gateway. */
export function customerIdOf(ctx: Context): string {
  const id = ctx.params.id ?? '';
  const problem = customerIdProblem(id);
  if (problem) throw invalid({ customer_id: [problem] });
  return id;
}

/** A saved card of this customer's, or 404: another customer's card is, to this one, no card at all. */
export async function customersCard(
  deps: Pick<MerchantDeps, 'store'>,
  customerId: string,
  cardId: string,
): Promise<SavedCardRecord> {
  const card = await deps.store.savedCards.ofCustomer(customerId, cardId);
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
