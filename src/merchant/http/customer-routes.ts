import type Router from '@koa/router';
import type { Context } from 'koa';
import { GatewayError } from '../../client/errors.js';
import type { GatewayPaymentInstrument } from '../../client/schemas.js';
import type { MerchantDeps } from '../checkout/deps.js';
import { type ChargeOutcome, chargeSavedCard } from '../checkout/saved.js';
import type { CustomerTokens } from '../customers/customer-token.js';
import { gatewayFailure } from '../errors/answer.js';
import { HttpError, invalid } from '../errors/http-error.js';
import { customersOf, merchantOf, signedMerchant } from '../orders/order-merchant.js';
import { orderRuleErrors } from '../orders/order-rules.js';
import { eraseCustomer } from '../privacy/erase.js';
import type { KnownInstrument } from '../store/index.js';
import type { SavedCardRecord } from '../store/records.js';
import { customerOrOperator } from './customer-auth.js';
import { jsonBody, ok, parse, parseQuery, validate } from './errors.js';
import { clientKey, customerKey, enforce } from './limits.js';
import type { OpsAuth, Principal } from './ops-auth.js';
import { actorOf } from './ops-auth.js';
import { requestMerchant, seesMerchant } from './order-access.js';
import { answerPayment, operatorKey, type RouteDeps } from './routes.js';
import { customerIdOf, customersCard, erasureView, savedCardView } from './saved-cards.js';
import { chargeSchema, customerQuerySchema, customerTokenSchema } from './schemas.js';
import { orderView } from './views.js';

export interface CustomerRouteDeps extends MerchantDeps, Pick<RouteDeps, 'orderRules' | 'limits'> {
  customerTokens: CustomerTokens;
  ops: OpsAuth;
  /**
   * How long after the kit last had the gateway's list of a customer's cards it answers from its own
   * rows (SAVED_CARDS_SYNC_WINDOW_MS). Default 30 s; 0: every list asks the gateway.
   */
  savedCardsSyncWindowMs?: number;
}

const PAGES = 10;
/** SAVED_CARDS_SYNC_WINDOW_MS's default. */
export const SAVED_CARDS_SYNC_WINDOW_MS = 30_000;

const known = (i: GatewayPaymentInstrument): KnownInstrument => ({
  vaultToken: i.vault_token,
  brand: i.brand,
  last4: i.last4,
  expMonth: i.exp_month,
  expYear: i.exp_year,
});

/**
 * Customers and their saved cards (issue 21). The customer's own calls carry their token; operators
 * theirs. The cards the kit shows are the gateway's: a list asks it (a card revoked there, or saved
 * by a payment whose answer the kit never heard, is seen then), unless the kit had its list less than
 * SAVED_CARDS_SYNC_WINDOW_MS ago: then its own rows (which hold that list and what the kit did since),
 * as of `synced_at`. A gateway that cannot answer leaves the kit's own rows, said to be so
 * (`synced: false`). Each list is limited per address and per customer (issue 41): a signed-in
 * shopper reloading it cannot spend checkout's share of the key's budget.
 */
export function customerRoutes(router: Router, deps: CustomerRouteDeps): void {
  router.post('/customers/:id/tokens', async (ctx) => {
    const who = await deps.ops.require(ctx, 'customers.vouch');
    const customerId = customerIdOf(ctx);
    const body = parse(customerTokenSchema, await jsonBody(ctx));
    // A leaked credential mints no more than a shop's checkouts need.
    await enforce(deps.limits, [['customer_tokens_per_credential', who.credential]]);
    const order =
      body.order_id === undefined ? null : await orderOfCustomer(deps, who, customerId, body.order_id);
    // Whose customer (platform mode): the order's merchant's, or the one the body names.
    const merchantId = order
      ? merchantOfOrder(deps, order, body.merchant_id)
      : requestMerchant(deps, who, body.merchant_id);
    const signed = signedMerchant(merchantId, deps.gateways.merchants);
    const { token, expiresAt } = deps.customerTokens.issue(
      customerId,
      deps.clock.now(),
      order ? { orderId: order.id, credential: who.credential } : undefined,
      signed,
    );
    await deps.store.audit.record({
      actor: actorOf(ctx, who),
      action: 'customer.vouch',
      orderId: order?.id ?? null,
      amountMinor: order?.amount_minor ?? null,
      currency: order?.currency ?? null,
      detail: `customer ${customerId}: ${order ? 'lists cards and pays this order' : 'lists and removes cards'}${signed === null ? '' : ` (merchant ${signed})`}`,
    });
    ok(
      ctx,
      {
        customer_id: customerId,
        customer_token: token,
        expires_at: expiresAt.toISOString(),
        order_id: order?.id ?? null,
      },
      201,
    );
  });

  const syncWindowMs = deps.savedCardsSyncWindowMs ?? SAVED_CARDS_SYNC_WINDOW_MS;

  router.get('/customers/:id/cards', async (ctx) => {
    // The address first, before anything is read; the customer once the caller is known to be
    // theirs (or an operator), so that a stranger cannot spend a customer's lists.
    await enforce(deps.limits, [['card_lists_per_address', clientKey(ctx)]]);
    const customerId = customerIdOf(ctx);
    const query = parseQuery(customerQuerySchema, ctx.query);
    const { merchantId } = await customerOrOperator(ctx, deps, customerId, 'read', query.merchant_id);
    const merchant = customersOf(merchantId, deps.gateways.merchants);
    await enforce(deps.limits, [['card_lists_per_customer', customerKey(customerId)]]);
    let cards: SavedCardRecord[];
    let synced = true;
    let syncedAt = await deps.store.savedCards.syncedAt(customerId, merchant);
    const since = syncedAt === null ? null : deps.clock.now() - syncedAt.getTime();
    if (since !== null && since >= 0 && since < syncWindowMs) {
      // The gateway's list of a moment ago, and what the kit did since (a card saved or removed here).
      cards = await deps.store.savedCards.list(customerId, merchant);
    } else
      try {
        // What the kit changes after this is newer than the list (sync).
        const listedAt = new Date(deps.clock.now());
        const listed: KnownInstrument[] = [];
        for (let page = 1; page <= PAGES; page++) {
          // The merchant's own customer of this id, at the gateway (a partner key names the merchant).
          const answer = await deps.gateways.of(merchantId).listPaymentInstruments(customerId, { page });
          listed.push(...answer.data.payment_instruments.map(known));
          const p = answer.data.pagination;
          if (!p || p.current_page >= p.last_page) break;
        }
        cards = await deps.store.savedCards.sync(customerId, listed, listedAt, merchant);
        syncedAt = listedAt;
      } catch (error) {
        if (!gatewayFailure(error)) throw error;
        deps.logger.warn(
          { customer: customerId, gateway: error instanceof GatewayError ? error.code : 'unreachable' },
          "saved cards listed from the kit's own records: the gateway did not answer",
        );
        cards = await deps.store.savedCards.list(customerId, merchant);
        synced = false;
      }
    const now = deps.clock.now();
    ok(ctx, {
      customer_id: customerId,
      cards: cards.map((c) => savedCardView(c, now)),
      synced,
      synced_at: syncedAt?.toISOString() ?? null,
    });
  });

  router.delete('/customers/:id/cards/:card', async (ctx) => {
    const customerId = customerIdOf(ctx);
    const query = parseQuery(customerQuerySchema, ctx.query);
    const { caller, merchantId } = await customerOrOperator(
      ctx,
      deps,
      customerId,
      'cards.manage',
      query.merchant_id,
    );
    const card = await customersCard(deps, customerId, ctx.params.card!, merchantId);
    if (card.status === 'active') {
      const token = (await deps.store.savedCards.vaultToken(card.id))!;
      try {
        await deps.gateways.of(merchantId).revokePaymentInstrument(token);
      } catch (error) {
        // Unknown to the gateway: nothing there can pay with it either. Anything else: tried again.
        if (!(error instanceof GatewayError && error.status === 404)) throw gatewayFailure(error) ?? error;
      }
    }
    const revoked = await deps.store.savedCards.revoke(
      customerId,
      card.id,
      caller.kind === 'customer' ? { name: 'customer' } : { actor: caller.actor },
      customersOf(merchantId, deps.gateways.merchants),
    );
    if (revoked.kind === 'not_found') throw new Error('a saved card vanished while it was revoked');
    ok(ctx, { card: savedCardView(revoked.card, deps.clock.now()) }, 200, 'The card is removed.');
  });

  router.post('/customers/:id/erase', async (ctx) => {
    const who = await deps.ops.require(ctx, 'customers.erase');
    const customerId = customerIdOf(ctx);
    // Whose customer (platform mode): the other merchants' customers of this id are left as they are.
    const merchantId = requestMerchant(deps, who, parseQuery(customerQuerySchema, ctx.query).merchant_id);
    const summary = await eraseCustomer(deps, customerId, actorOf(ctx, who), 'operator', merchantId);
    ok(ctx, erasureView(summary), 200, 'The customer is erased.');
  });

  router.post('/customers/:id/charges', async (ctx) => {
    const who = await deps.ops.require(ctx, 'money.move');
    const customerId = customerIdOf(ctx);
    // Everything wrong with the request in one answer: the header, the body, then the shop's rules.
    const key = operatorKey(ctx);
    const parsed = validate(chargeSchema, await jsonBody(ctx));
    const errors = {
      ...(key ? {} : { 'Idempotency-Key': ['is required for charges, so that a retry never charges twice'] }),
      ...(parsed.ok
        ? orderRuleErrors(deps.orderRules, parsed.data.currency, parsed.data.minor)
        : parsed.errors),
    };
    if (!parsed.ok || !key || Object.keys(errors).length > 0) throw invalid(errors);
    const body = parsed.data;
    const actor = actorOf(ctx, who);
    // Whose customer (platform mode): the new order is that merchant's.
    const merchantId = requestMerchant(deps, who, body.merchant_id);
    const outcome = await chargeSavedCard(deps, {
      merchantId,
      customerId,
      // Removed or expired, it is refused by the charge itself: the same key again is answered as it stands.
      card: await customersCard(deps, customerId, body.card, merchantId),
      amountMinor: body.minor,
      currency: body.currency,
      mode: body.mode,
      description: body.description,
      idempotencyKey: key,
      initiatedBy: actor,
    });
    await answerCharge(ctx, outcome);
  });
}

/**
 * The order a token is minted for: this customer's own (422 naming `order_id` otherwise), and one
 * the credential may see (another merchant's, to one scoped to others, is no order of the kit).
 */
async function orderOfCustomer(
  deps: Pick<MerchantDeps, 'store' | 'gateways'>,
  who: Principal,
  customerId: string,
  orderId: string,
) {
  const order = await deps.store.orders.find(orderId);
  if (!order || !seesMerchant(deps, who, order.merchant_id))
    throw invalid({ order_id: ['is no order of the kit'] });
  if (order.customer?.merchant_customer_id !== customerId)
    throw invalid({
      order_id: [
        "names another customer's order, or one that names none: a token pays its own customer's order",
      ],
    });
  return order;
}

/** A token for an order is the order's merchant's customer's: a `merchant_id` beside it must be the same. */
function merchantOfOrder(
  deps: Pick<MerchantDeps, 'gateways'>,
  order: { merchant_id: number | null },
  named: number | undefined,
): number | null {
  const merchantId = merchantOf(order.merchant_id, deps.gateways.merchants);
  if (named !== undefined && named !== merchantId)
    throw invalid({ merchant_id: [`must be the order's merchant (${merchantId}) or left out`] });
  return merchantId;
}

async function answerCharge(ctx: Context, outcome: ChargeOutcome): Promise<void> {
  if (outcome.kind === 'key_reused')
    throw new HttpError(
      409,
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was used for another charge (another amount, currency, card or mode); nothing was charged.',
      { data: { order: orderView(outcome.order, outcome.attempt) } },
    );
  if (outcome.kind === 'card_refused')
    throw new HttpError(422, outcome.code, outcome.message, { errors: { card: [outcome.field] } });
  if (outcome.kind === 'done' && outcome.created) {
    ok(ctx, { order: orderView(outcome.order, outcome.attempt), next_action: null }, 201, 'Charged.');
    return;
  }
  // An operator's charge: the operator's view of the order, as the other operator routes answer.
  await answerPayment(ctx, outcome, orderView);
}
