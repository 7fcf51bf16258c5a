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

  async order(amount: string): Promise<Order> {
    const res = await call(this.url, 'POST', '/orders', { amount, currency: 'EUR' });
    if (res.status !== 201) throw new Error(`POST /orders: ${res.status} ${res.text}`);
    return { id: res.body.data.order.id, reference: res.body.data.order.reference };
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
      authorization: `Bearer ${this.opsToken}`,
      'idempotency-key': key,
    });
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

export const operatorKey = () => `crash-${randomBytes(9).toString('hex')}`;

/**
 * What a browser does on a hosted page (sandbox.md sections 5 and 7): it posts the button's form and
 * is sent (303) to the shop's landing, which it opens.
 */
export async function press(shop: Shop, pageUrl: string, action: 'authenticate' | 'pay', step: string) {
  return shop.landing(step, await pressButton(pageUrl, action));
}
