import { chargeReference } from '../src/merchant/checkout/saved.js';
import { pressButton } from '../test/support/kit.js';
import type { HoldMode, HoldRule } from './hold-proxy.js';
import { type Answer, CHALLENGE_CARD, type Order, operatorKey, press, type Shop } from './shop.js';

/**
 * The crash points: where the kit's api process dies in the middle of a payment or an operation,
 * and what the shopper or operator does afterwards. Each case starts on a fresh order; `start`
 * makes it and brings it to where the case begins (paid, authorized, at a challenge, its customer
 * with a saved card) with the api alive, then hands the run the request the api dies in and the
 * retry. A merchant-initiated charge's order is the charge's own: the act makes it.
 */

/** `charge`: an operator's charge of a saved card, which makes its order and pays it exactly once. */
export type Intent = 'pay' | 'charge' | 'capture' | 'refund' | 'void';

/**
 * The order a case is about. The verdict finds it by its reference, as it finds the gateway's records:
 * a merchant-initiated charge's order does not exist before the act (its id is null until then), its
 * reference does (the kit makes it of the customer and the Idempotency-Key).
 */
export interface CaseOrder {
  id: string | null;
  reference: string;
}

export interface CaseSteps {
  order: CaseOrder;
  /** The request during which the api dies; its answer should be a cut connection. */
  act(): Promise<Answer>;
  /** What a shopper or operator does next, on the api started again; every answer, in order. */
  retry(): Promise<Answer[]>;
}

export interface CrashCase {
  name: string;
  /** Where the api dies, in words. */
  death: string;
  /** The payment's kind, for its truth (test/support/truth-rules.ts). */
  kind: 'card' | 'redirect';
  intent: Intent;
  /** Which side holds the exchange: between the kit and the gateway, or between the shopper and the kit. */
  door: 'gateway' | 'front';
  rule(order: CaseOrder): HoldRule;
  /** The case's order, of `amount`, brought to where the case begins. */
  start(shop: Shop, amount: string): Promise<CaseSteps>;
}

/** Order statuses a shopper takes as the end of paying (merchant.md, Orders). */
const SETTLED = new Set(['paid', 'authorized', 'partially_refunded', 'refunded', 'voided', 'disputed']);

const TRANSACTIONS = /^\/api\/v1\/transactions$/;
const SESSIONS = /^\/api\/v1\/payment-sessions$/;
const operation = (name: string) => new RegExp(`^/api/v1/transactions/\\d+/${name}$`);
/** The kit's own call, not a worker's or a scheduler's. */
const kitCall =
  (path: RegExp, mode: HoldMode = 'answer') =>
  () => ({ method: 'POST', path, mode, who: 'api' });

/** A payment made before the case, with the api alive: it must go through. */
async function paid(shop: Shop, order: Order, mode: 'sale' | 'auth'): Promise<void> {
  const answer = await shop.payCard('setup', order, mode);
  const want = mode === 'sale' ? 'paid' : 'authorized';
  if (answer.status !== 200 || answer.orderStatus !== want)
    throw new Error(
      `the ${mode} before the case answered ${answer.status} ${answer.code} (${answer.orderStatus})`,
    );
}

/** The same card payment, once cut off and once again: a shopper pressing Pay a second time. */
const cardPayment = (mode: 'sale' | 'auth') => async (shop: Shop, amount: string) => {
  const order = await shop.order(amount);
  return {
    order,
    act: () => shop.payCard('pay', order, mode),
    retry: async () => [await shop.payCard('pay again', order, mode)],
  };
};

/**
 * A returning customer (a card saved by an order paid before) pays a new order of theirs with that
 * card, once cut off and once again.
 */
const savedCardPayment = (mode: 'sale' | 'auth') => async (shop: Shop, amount: string) => {
  const customer = await shop.customerWithCard(amount);
  const order = await shop.order(amount, customer.id);
  return {
    order,
    act: () => shop.paySaved('pay', order, customer, mode),
    retry: async () => [await shop.paySaved('pay again', order, customer, mode)],
  };
};

/**
 * An operator charges a customer's saved card (a renewal): the request makes the order and pays it;
 * then the same request with the same Idempotency-Key.
 */
const merchantCharge = async (shop: Shop, amount: string) => {
  const customer = await shop.customerWithCard(amount);
  const key = operatorKey();
  return {
    order: { id: null, reference: chargeReference(customer.id, key) },
    act: () => shop.charge('charge', customer, amount, key),
    retry: async () => [await shop.charge('charge again', customer, amount, key)],
  };
};

/** An operator's request, then the same one with the same Idempotency-Key. */
const operatorRequest =
  (name: 'capture' | 'refund' | 'void', before: 'sale' | 'auth', body: unknown) =>
  async (shop: Shop, amount: string) => {
    const order = await shop.order(amount);
    await paid(shop, order, before);
    const key = operatorKey();
    return {
      order,
      act: () => shop.operate(name, order, name, body, key),
      retry: async () => [await shop.operate(`${name} again`, order, name, body, key)],
    };
  };

export const CASES: readonly CrashCase[] = [
  {
    name: 'card sale',
    death: "gateway's answer to POST /transactions held, not yet recorded",
    kind: 'card',
    intent: 'pay',
    door: 'gateway',
    rule: kitCall(TRANSACTIONS),
    start: cardPayment('sale'),
  },
  {
    name: 'card sale',
    death: 'attempt stored, POST /transactions held before it leaves',
    kind: 'card',
    intent: 'pay',
    door: 'gateway',
    rule: kitCall(TRANSACTIONS, 'request'),
    start: cardPayment('sale'),
  },
  {
    name: 'card sale',
    death: "answer recorded, the kit's answer to the shopper held",
    kind: 'card',
    intent: 'pay',
    door: 'front',
    rule: (order) => ({ method: 'POST', path: new RegExp(`^/orders/${order.id}/pay/card$`), mode: 'answer' }),
    start: cardPayment('sale'),
  },
  {
    name: 'card auth',
    death: "gateway's answer to POST /transactions held, not yet recorded",
    kind: 'card',
    intent: 'pay',
    door: 'gateway',
    rule: kitCall(TRANSACTIONS),
    start: cardPayment('auth'),
  },
  {
    name: '3DS return',
    death: "gateway's answer to POST /transactions held during GET /checkout/3ds-return",
    kind: 'card',
    intent: 'pay',
    door: 'gateway',
    rule: kitCall(TRANSACTIONS),
    start: async (shop, amount) => {
      const order = await shop.order(amount);
      const pay = await shop.payCard('pay', order, 'sale', CHALLENGE_CARD);
      if (pay.status !== 200 || !pay.nextAction)
        throw new Error(`paying with the challenge card answered ${pay.status} ${pay.code}, no challenge`);
      let landing = '';
      return {
        order,
        // Authenticate on the challenge page; the browser then opens the kit's 3DS return.
        act: async () => {
          landing = await pressButton(pay.nextAction!, 'authenticate');
          return shop.landing('return', landing);
        },
        // The shopper reloads the page; if the order is not settled, pays again through a new challenge.
        retry: async () => {
          const answers = [await shop.landing('reload', landing)];
          if (SETTLED.has(answers[0]!.orderStatus ?? '')) return answers;
          const again = await shop.payCard('pay again', order, 'sale', CHALLENGE_CARD);
          answers.push(again);
          if (again.status === 200 && again.nextAction)
            answers.push(await press(shop, again.nextAction, 'authenticate', 'return'));
          return answers;
        },
      };
    },
  },
  {
    name: 'redirect session',
    death: "gateway's answer to POST /payment-sessions held, not yet recorded",
    kind: 'redirect',
    intent: 'pay',
    door: 'gateway',
    rule: kitCall(SESSIONS),
    start: async (shop, amount) => {
      const order = await shop.order(amount);
      return {
        order,
        act: () => shop.payRedirect('pay', order),
        // Pay again; a checkout page handed back is completed with Pay, as the shopper would.
        retry: async () => {
          const again = await shop.payRedirect('pay again', order);
          if (again.status !== 200 || !again.nextAction) return [again];
          return [again, await press(shop, again.nextAction, 'pay', 'return')];
        },
      };
    },
  },
  {
    name: 'saved card sale',
    death: "gateway's answer to POST /transactions held, not yet recorded",
    kind: 'card',
    intent: 'pay',
    door: 'gateway',
    rule: kitCall(TRANSACTIONS),
    start: savedCardPayment('sale'),
  },
  {
    name: 'saved card sale',
    death: 'attempt stored, POST /transactions held before it leaves',
    kind: 'card',
    intent: 'pay',
    door: 'gateway',
    rule: kitCall(TRANSACTIONS, 'request'),
    start: savedCardPayment('sale'),
  },
  {
    name: 'merchant-initiated charge',
    death: "order and attempt stored, gateway's answer to POST /transactions held",
    kind: 'card',
    intent: 'charge',
    door: 'gateway',
    rule: kitCall(TRANSACTIONS),
    start: merchantCharge,
  },
  {
    name: 'capture',
    death: "gateway's answer to POST /transactions/{id}/capture held",
    kind: 'card',
    intent: 'capture',
    door: 'gateway',
    rule: kitCall(operation('capture')),
    start: operatorRequest('capture', 'auth', {}),
  },
  {
    name: 'refund',
    death: "gateway's answer to POST /transactions/{id}/refund held",
    kind: 'card',
    intent: 'refund',
    door: 'gateway',
    rule: kitCall(operation('refund')),
    start: operatorRequest('refund', 'sale', { amount: '2.00', reason: 'damaged' }),
  },
  {
    name: 'void',
    death: "gateway's answer to POST /transactions/{id}/void held",
    kind: 'card',
    intent: 'void',
    door: 'gateway',
    rule: kitCall(operation('void')),
    start: operatorRequest('void', 'auth', {}),
  },
];
