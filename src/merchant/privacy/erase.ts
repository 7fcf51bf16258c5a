import type { Caller } from '../../client/budget.js';
import { GatewayError } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import type { Gateways } from '../../client/merchant-gateways.js';
import type { Clock } from '../../shared/clock.js';
import type { SecretBox } from '../../shared/secret-box.js';
import { openHold, sealHold, withoutCustomer } from '../checkout/hold.js';
import type { CustomerTokens } from '../customers/customer-token.js';
import {
  type ErasureSummary,
  erasedCustomer,
  erasureDetail,
  personalValues,
  scrubJson,
} from '../customers/erasure.js';
import { type Actor, actorLabel } from '../operators/roles.js';
import { customersOf, type MerchantFilter, signedMerchant } from '../orders/order-merchant.js';
import type { Statement } from '../store/batch-writes.js';
import { holdRewrite } from '../store/holds.js';
import { payloadRewrite } from '../store/inbox.js';
import type { Store } from '../store/index.js';

/** What an erasure runs with: the kit's store, the gateway (the saved cards), the key that seals holds. */
export interface ErasureDeps {
  store: Pick<Store, 'orders' | 'inbox' | 'holds' | 'outbox' | 'audit' | 'savedCards'>;
  gateways: Gateways<Pick<GatewayClient, 'listPaymentInstruments' | 'revokePaymentInstrument'>>;
  box: SecretBox;
  clock: Clock;
  customerTokens: Pick<CustomerTokens, 'erasureReference'>;
}

/** Orders erased per read of the customer's ids. */
const PAGE = 100;
/** The gateway's list of a customer's instruments, at most this many pages of 100. */
const INSTRUMENT_PAGES = 20;

/**
 * Forgets a customer (issue 43, part 4: `POST /customers/{id}/erase`, `cli customers erase`). In turn:
 * 1. each of their orders, through the order's one writer, in one transaction each: `customer`
 *    becomes the marker, in the order and in the bodies of its events in the outbox, with a history
 *    line; the webhook payloads kept about it lose what they held of the person, and a payment across
 *    an open 3DS challenge keeps its card but not the customer's details (money wins: the payment
 *    completes, and reconciles, as any other). An erasure that stops part-way leaves each order
 *    erased whole or not at all: the same request again finds the ones left by the customer's id;
 * 2. their saved cards are revoked at the gateway (the kit's, and any the gateway lists for them that
 *    the kit never heard of), after the orders: a card a payment in flight saves once its order is
 *    erased is not kept (store/saved-cards.ts remember), and one saved before is listed here. A
 *    gateway that does not answer stops the erasure here; the same request again finishes it (every
 *    step is idempotent);
 * 3. the kit's rows of those cards are deleted;
 * 4. audit lines that named the customer's id name their reference instead;
 * 5. an audit line of the erasure, naming the reference (`cer_...`), never the id.
 * Every money fact stays: amounts, statuses, ids, references, disputes, history, so the report does
 * not move. A second erasure finds nothing left and says so (zeros).
 */
export async function eraseCustomer(
  deps: ErasureDeps,
  customerId: string,
  actor: Actor,
  caller: Caller = 'operator',
  merchantId: number | null = null,
): Promise<ErasureSummary> {
  // Whose customer (platform mode, issue 45): a customer id names a customer of one merchant; the
  // other merchants' customers of the same id keep their orders and cards. Null: the kit's first.
  const served = deps.gateways.merchants;
  const merchant = customersOf(merchantId, served);
  const reference = deps.customerTokens.erasureReference(customerId, signedMerchant(merchantId, served));
  const erasedAt = new Date(deps.clock.now());
  const summary: ErasureSummary = {
    reference,
    erasedAt,
    orders: 0,
    cardsRevoked: 0,
    cardsRemoved: 0,
    webhookEvents: 0,
    orderEvents: 0,
    heldPayments: 0,
    auditLines: 0,
  };
  const marker = { ...erasedCustomer(erasedAt) };
  const line = { sourceId: `erase:${reference}`, detail: `customer erased by ${actorLabel(actor)}` };
  const erased: string[] = [];
  for (let after = ''; ; ) {
    const ids = await deps.store.orders.idsOfCustomer(customerId, after, PAGE, merchant);
    for (const orderId of ids) {
      const kept = await deps.store.inbox.keptOfOrder(orderId);
      const held = await deps.store.holds.heldOf(orderId);
      let scrubbed = { webhookEvents: 0, heldPayments: 0 };
      // Worked out under the order's lock, from the customer as it stands there (run again should the
      // writer's transaction be).
      const scrub = (customer: Record<string, unknown>): Statement[] => {
        const values = personalValues(customer, customerId);
        const payloads = kept.flatMap(({ eventId, payload }) => {
          const without = scrubJson(payload, values);
          return without === payload ? [] : [payloadRewrite(eventId, payload, without)];
        });
        const holds = held.map(({ attemptId, sealed }) =>
          holdRewrite(attemptId, sealed, resealed(deps.box, attemptId, sealed)),
        );
        scrubbed = { webhookEvents: payloads.length, heldPayments: holds.length };
        return [...payloads, ...holds];
      };
      const customer = await deps.store.orders.eraseCustomer(orderId, marker, line, scrub);
      if (customer === null) continue; // another erasure had it first
      erased.push(orderId);
      summary.webhookEvents += scrubbed.webhookEvents;
      summary.heldPayments += scrubbed.heldPayments;
    }
    if (ids.length < PAGE) break;
    after = ids.at(-1)!;
  }
  summary.orders = erased.length;
  summary.orderEvents = await deps.store.outbox.countOf(erased);
  summary.cardsRevoked = await revokeAtGateway(deps, customerId, caller, merchantId, merchant);
  summary.cardsRemoved = await deps.store.savedCards.forget(customerId, merchant);
  summary.auditLines = await deps.store.audit.forgetCustomer(customerId, reference, merchant);
  await deps.store.audit.record({
    actor,
    action: 'customer.erase',
    subjectId: reference,
    detail: erasureDetail(summary),
  });
  return summary;
}

/** A held payment's sealed details without the customer's (checkout/hold.ts), sealed again to its attempt. */
function resealed(box: SecretBox, attemptId: string, sealed: string): string {
  return sealHold(box, attemptId, withoutCustomer(openHold(box, attemptId, sealed)));
}

/**
 * Every instrument of the customer's revoked at the gateway: the kit's active cards, and any the
 * gateway lists (saved by a payment whose answer the kit never heard). Revoking one revoked already, or
 * unknown there, is no failure; a gateway without the list operation (404) lists none. Answers how
 * many were revoked.
 */
async function revokeAtGateway(
  deps: ErasureDeps,
  customerId: string,
  caller: Caller,
  merchantId: number | null,
  merchant: MerchantFilter | undefined,
): Promise<number> {
  const tokens = new Set(await deps.store.savedCards.activeTokens(customerId, merchant));
  // The merchant's own customer of this id, at the gateway (a partner key names the merchant).
  const gateway = deps.gateways.of(merchantId);
  try {
    for (let page = 1; page <= INSTRUMENT_PAGES; page++) {
      const answer = await gateway.listPaymentInstruments(customerId, { page, perPage: 100, caller });
      for (const i of answer.data.payment_instruments) tokens.add(i.vault_token);
      const p = answer.data.pagination;
      if (!p || p.current_page >= p.last_page) break;
    }
  } catch (error) {
    if (!(error instanceof GatewayError && error.status === 404)) throw error;
  }
  let revoked = 0;
  for (const token of tokens)
    try {
      await gateway.revokePaymentInstrument(token, caller);
      revoked += 1;
    } catch (error) {
      if (!(error instanceof GatewayError && error.status === 404)) throw error;
    }
  return revoked;
}
