import { randomBytes } from 'node:crypto';
import { landingStatus, pressButton } from '../test/support/kit.js';
import { call } from '../test/support/process.js';

/**
 * A shopper and an operator at the kit's front door, a browser on the gateway's hosted pages: what
 * the crash points send, each answer read into one shape (a connection cut off is status 0).
 */

export const CARD = {
  number: '4242424242424242',
  exp_month: 12,
  exp_year: 2034,
  cvv: '123',
  name: 'Ada Lovelace',
};
/** sandbox.md section 4: a challenge at 3D Secure. */
export const CHALLENGE_CARD = { ...CARD, number: '4000000000003220' };

/** What one request came to, as the shopper or operator sees it. */
export interface Answer {
  /** The request, in a word (`pay`, `reload`, `return`, ...). */
  step: string;
  /** 0: no answer (the connection was cut). */
  status: number;
  /** The envelope's code ('' on success); a landing page has none. */
  code: string;
  /** The order's status the answer shows: data.order.status, an error's data.status, a landing's data-status. */
  orderStatus: string | null;
  /** data.next_action.url: the challenge or checkout page. */
  nextAction: string | null;
  retryAfter: string | null;
}

export interface Order {
  id: string;
  reference: string;
}

/** A returning customer with a card saved (issue 21): their token, and the kit's id for the card. */
export interface Customer {
  id: string;
  token: string;
  card: string;
}

const cut = (step: string): Answer => ({
  step,
  status: 0,
  code: '',
  orderStatus: null,
  nextAction: null,
  retryAfter: null,
});

export class Shop {
  constructor(
    private readonly url: string,
    private readonly opsToken: string,
  ) {}

  async #json(step: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) {
    try {
      const res = await call(this.url, method, path, body, headers);
      const data = res.body?.data;
      return {
        step,
        status: res.status,
        code: String(res.body?.code ?? ''),
        orderStatus: data?.order?.status ?? data?.status ?? null,
        nextAction: data?.next_action?.url ?? null,
        retryAfter: res.headers.get('retry-after'),
      } satisfies Answer;
    } catch {
      return cut(step);
    }
  }

  /** A new order; `customerId`: one that names its customer, whose saved cards may pay it. */
  async order(amount: string, customerId?: string): Promise<Order> {
    const res = await call(this.url, 'POST', '/orders', {
      amount,
      currency: 'EUR',
      ...(customerId === undefined ? {} : { customer: { merchant_customer_id: customerId } }),
    });
    if (res.status !== 201) throw new Error(`POST /orders: ${res.status} ${res.text}`);
    return { id: res.body.data.order.id, reference: res.body.data.order.reference };
  }

  /**
   * A new customer with a saved card, as the shop makes one (docs/saved-cards.md): the customer's
   * token (the bootstrap token may vouch, as the storefront's credential does), an order of theirs
   * paid with `save_card`, then their list of cards. Any step that does not go through throws.
   */
  async customerWithCard(amount: string): Promise<Customer> {
    const id = `crash-cus-${randomBytes(6).toString('hex')}`;
    const vouched = await call(this.url, 'POST', `/customers/${id}/tokens`, undefined, this.#operator());
    if (vouched.status !== 201) throw new Error(`the customer's token: ${vouched.status} ${vouched.text}`);
    const token = String(vouched.body.data.customer_token);
    const theirs = { 'customer-token': token };
    const order = await this.order(amount, id);
    const body = { card: CARD, mode: 'sale', save_card: true };
    const paid = await call(this.url, 'POST', `/orders/${order.id}/pay/card`, body, theirs);
    if (paid.status !== 200 || paid.body?.data?.order?.status !== 'paid')
      throw new Error(`the payment that saves the card: ${paid.status} ${paid.text}`);
    const listed = await call(this.url, 'GET', `/customers/${id}/cards`, undefined, theirs);
    const cards = listed.status === 200 ? (listed.body.data.cards as { id: string }[]) : [];
    if (cards.length !== 1) throw new Error(`the customer's cards: ${listed.status} ${listed.text}`);
    return { id, token, card: cards[0]!.id };
  }

  /**
   * The customer pays their order with their saved card (POST /orders/{id}/pay/saved), with a token
   * the shop's server mints for that order (docs/saved-cards.md).
   */
  async paySaved(step: string, order: Order, customer: Customer, mode: 'sale' | 'auth'): Promise<Answer> {
    const path = `/customers/${customer.id}/tokens`;
    const minted = await call(this.url, 'POST', path, { order_id: order.id }, this.#operator());
    if (minted.status !== 201) throw new Error(`the order's customer token: ${minted.status} ${minted.text}`);
    return this.#json(
      step,
      'POST',
      `/orders/${order.id}/pay/saved`,
      { card: customer.card, mode },
      { 'customer-token': String(minted.body.data.customer_token) },
    );
  }

  /** An operator charges the customer's saved card for a new order; the same `key` on a retry. */
  charge(step: string, customer: Customer, amount: string, key: string): Promise<Answer> {
    return this.#json(
      step,
      'POST',
      `/customers/${customer.id}/charges`,
      { card: customer.card, amount, currency: 'EUR' },
      { ...this.#operator(), 'idempotency-key': key },
    );
  }

  payCard(step: string, order: Order, mode: 'sale' | 'auth', card = CARD): Promise<Answer> {
    return this.#json(step, 'POST', `/orders/${order.id}/pay/card`, { card, mode });
  }

  payRedirect(step: string, order: Order): Promise<Answer> {
    return this.#json(step, 'POST', `/orders/${order.id}/pay/redirect`, {
      payment_method: 'psc',
      customer: { country_code: 'DE' },
    });
  }

  /** An operator's capture, refund or void; the same `key` on a retry, as merchant.md asks. */
  operate(
    step: string,
    order: Order,
    operation: 'capture' | 'refund' | 'void',
    body: unknown,
    key: string,
  ): Promise<Answer> {
    return this.#json(step, 'POST', `/orders/${order.id}/${operation}`, body, {
      ...this.#operator(),
      'idempotency-key': key,
    });
  }

  #operator(): Record<string, string> {
    return { authorization: `Bearer ${this.opsToken}` };
  }

  /** A browser on a landing page (the 3DS return, the session's return): its `data-status`. */
  async landing(step: string, url: string): Promise<Answer> {
    try {
      const res = await call(url, 'GET', '');
      return {
        ...cut(step),
        status: res.status,
        orderStatus: landingStatus(res.text) ?? null,
      };
    } catch {
      return cut(step);
    }
  }
}

// base64url, not hex: a hex key now and then holds a digit run that reads as a card number (1 in 3,000),
// and the kit refuses such a key (422 naming Idempotency-Key) before the call the case waits for.
export const operatorKey = () => `crash-${randomBytes(9).toString('base64url')}`;

/**
 * What a browser does on a hosted page (sandbox.md sections 5 and 7): it posts the button's form and
 * is sent (303) to the shop's landing, which it opens.
 */
export async function press(shop: Shop, pageUrl: string, action: 'authenticate' | 'pay', step: string) {
  return shop.landing(step, await pressButton(pageUrl, action));
}
