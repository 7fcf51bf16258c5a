import { randomBytes } from 'node:crypto';
import { keepSecret, withSecret } from '../test/support/order-secrets.js';
import { delay } from '../test/support/process.js';
import type { GatewayReader } from './gateway.js';
import type { OrderMerchants } from './merchants.js';
import { between, type Random, weighted } from './random.js';

/**
 * The payments: real shoppers and operators through the kit's API against the sandbox, every kind
 * the gateway has an event for (sales, auths, captures, partial and full refunds, voids, declines,
 * chargebacks in full and in part and reversed, auths left to lapse, redirects paid, cancelled and
 * left open, orders the shop cancels), started at a steady rate while the faults happen. A step the
 * faults cut short ends that order's story: the order stays what the gateway made it, and must
 * still end equal to it.
 */

const CARD = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' };
const DECLINED_CARD = { ...CARD, number: '4000000000000002' };
const CALL_MS = 40_000; // beyond the kit's own 30 s request timeout
/** Operator calls carry an Idempotency-Key, so a retry after a fault is safe: this many tries. */
const OPERATOR_TRIES = 4;

// biome-ignore lint/suspicious/noExplicitAny: envelopes of every shape
export type Answer = { status: number; body: any };

/** The kit's API as the shop and its shoppers call it; a call that gets no answer is status 0. */
export class KitApi {
  /** Each order's client secret, as the shop keeps it: its pay routes need it (issue 41). */
  readonly #secrets = new Map<string, string>();

  constructor(
    readonly url: string,
    readonly opsToken: string,
  ) {}

  async call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    try {
      const res = await fetch(this.url + path, {
        method,
        headers: { 'content-type': 'application/json', ...withSecret(this.#secrets, method, path, headers) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_MS),
      });
      const text = await res.text();
      const answer = { status: res.status, body: text ? JSON.parse(text) : null };
      keepSecret(this.#secrets, method, path, answer);
      return answer;
    } catch {
      return { status: 0, body: null }; // no answer: the order's story ends here
    }
  }

  /** The order as operators read it: the payment answers show only its public view (no payment ids). */
  order(orderId: string): Promise<Answer> {
    return this.call('GET', `/orders/${orderId}`, undefined, this.operator);
  }

  /** The kit's bootstrap token (admin), for the operator's and the shop's server's calls. */
  get operator(): Record<string, string> {
    return { authorization: `Bearer ${this.opsToken}` };
  }

  /** An operator's capture, refund or void, retried under one Idempotency-Key while the kit is unavailable. */
  async operate(orderId: string, operation: string, body: unknown): Promise<Answer> {
    const headers = {
      ...this.operator,
      // base64url: a hex key may read as a card number, which the kit refuses (shop.ts operatorKey).
      'idempotency-key': `chaos-${randomBytes(9).toString('base64url')}`,
    };
    let answer: Answer = { status: 0, body: null };
    for (let i = 0; i < OPERATOR_TRIES; i++) {
      answer = await this.call('POST', `/orders/${orderId}/${operation}`, body, headers);
      if (answer.status !== 0 && answer.status < 500) return answer;
      await delay(2000);
    }
    return answer;
  }
}

/** An amount in major units as the API takes it, from minor units. */
const major = (minor: number, currency: string) =>
  currency === 'JPY' ? String(minor) : (minor / 100).toFixed(2);

interface Order {
  id: string;
  currency: string;
  amount: number;
  /** The customer the order names (issue 43): their payments name them too. Null: nobody. */
  customer: Customer | null;
}

/** A customer as the shop sends one: gateway-api.md's `customer` object. */
export type Customer = Readonly<Record<string, string>>;

type Story = (s: Shopper) => Promise<boolean>;

/** One order's story: its steps, each ending the story (false) when the kit or the gateway says no. */
class Shopper {
  constructor(
    readonly api: KitApi,
    readonly gateway: GatewayReader,
    readonly random: Random,
    readonly order: Order,
  ) {}

  /** A pause between steps, so that stories interleave with each other, the duplicates and the faults. */
  pause = () => delay(between(this.random, 100, 1500));

  /**
   * The deadline (ms) of the auth this story made and has not yet captured or voided: it lapses then
   * (sandbox.md section 11), unless a capture the story did not hear of took it. Null: none open.
   */
  lapsesAt: number | null = null;

  /** What a pay route's body says of the customer, when the order names one. */
  #customer(): { customer?: Customer } {
    return this.order.customer === null ? {} : { customer: this.order.customer };
  }

  async pay(mode: 'sale' | 'auth', card = CARD): Promise<number | null> {
    const body = { card, mode, ...this.#customer() };
    const answer = await this.api.call('POST', `/orders/${this.order.id}/pay/card`, body);
    const want = mode === 'sale' ? 'paid' : 'authorized';
    if (answer.status !== 200 || answer.body.data.order.status !== want) return null;
    const seen = await this.api.order(this.order.id);
    const transaction = seen.status === 200 ? seen.body.data.order.payment?.gateway_transaction_id : null;
    if (!transaction) return null;
    const id = Number(transaction);
    if (mode === 'auth') {
      // The gateway's own deadline; the kit's word for it only when the gateway does not answer.
      const record = await this.gateway.record(id).catch(() => null);
      const deadline = record ? record.captureBefore : seen.body.data.order.capture_before;
      this.lapsesAt = deadline ? Date.parse(deadline) : null;
    }
    return id;
  }

  /** A sale with a card the issuer declines: the kit answers 402. */
  async decline(): Promise<boolean> {
    const body = { card: DECLINED_CARD, mode: 'sale', ...this.#customer() };
    return (await this.api.call('POST', `/orders/${this.order.id}/pay/card`, body)).status === 402;
  }

  async redirect(): Promise<string | null> {
    const answer = await this.api.call('POST', `/orders/${this.order.id}/pay/redirect`, {
      payment_method: 'ideal',
      customer: { ...this.order.customer, country_code: 'NL' },
    });
    if (answer.status !== 200) return null;
    return String(answer.body.data.next_action.url).split('/').pop()!;
  }

  async operate(operation: 'capture' | 'refund' | 'void', minor?: number): Promise<boolean> {
    const body =
      minor === undefined
        ? {}
        : {
            amount: major(minor, this.order.currency),
            ...(operation === 'refund' ? { reason: 'chaos' } : {}),
          };
    const done = (await this.api.operate(this.order.id, operation, body)).status === 200;
    if (done && operation !== 'refund') this.lapsesAt = null;
    return done;
  }

  /**
   * The shop calls the order off (POST /orders/{id}/cancel, issue 43): an authorisation is voided
   * first; the order ends, closed. Retried while the kit is unavailable, as an operator's call is.
   */
  async cancel(): Promise<boolean> {
    const done = (await this.api.operate(this.order.id, 'cancel', { reason: 'chaos' })).status === 200;
    if (done) this.lapsesAt = null;
    return done;
  }

  /**
   * The payment is charged back at the gateway (a sandbox control: the kit hears of it only from the
   * gateway), for `minor` or, without, all that was captured and not refunded.
   */
  async chargeback(transactionId: number, minor?: number): Promise<true> {
    await this.gateway.chargeback(
      transactionId,
      minor === undefined ? undefined : major(minor, this.order.currency),
    );
    return true;
  }

  /** The merchant wins the dispute: captured again at the gateway. */
  async reverse(transactionId: number): Promise<true> {
    await this.gateway.reverseChargeback(transactionId);
    return true;
  }

  /** `fraction` of the order's amount, in minor units, at least 1. */
  part(fraction: number): number {
    return Math.max(1, Math.floor(this.order.amount * fraction));
  }
}

/** Each story with its weight in the mix, and how many events the gateway makes for it. */
export const STORIES: readonly (readonly [string, number, Story])[] = [
  [
    'sale, refunded in three parts',
    6,
    async (s) => {
      if ((await s.pay('sale')) === null) return false;
      const first = s.part(0.2);
      const second = s.part(0.3);
      for (const minor of [first, second, s.order.amount - first - second]) {
        await s.pause();
        if (!(await s.operate('refund', minor))) return false;
      }
      return true;
    },
  ],
  [
    'sale, refunded in part',
    2,
    async (s) => (await s.pay('sale')) !== null && s.pause().then(() => s.operate('refund', s.part(0.25))),
  ],
  ['sale', 1, async (s) => (await s.pay('sale')) !== null],
  [
    'auth, captured, refunded in part',
    2,
    async (s) =>
      (await s.pay('auth')) !== null &&
      (await s.pause().then(() => s.operate('capture'))) &&
      s.pause().then(() => s.operate('refund', s.part(0.4))),
  ],
  [
    'auth, captured in part',
    1,
    async (s) => (await s.pay('auth')) !== null && s.pause().then(() => s.operate('capture', s.part(0.6))),
  ],
  [
    'auth, captured, charged back in part',
    0.5,
    async (s) => {
      const id = await s.pay('auth');
      if (id === null || !(await s.pause().then(() => s.operate('capture')))) return false;
      await s.pause();
      return s.chargeback(id, s.part(0.5));
    },
  ],
  ['auth, voided', 1, async (s) => (await s.pay('auth')) !== null && s.pause().then(() => s.operate('void'))],
  // Neither captured nor voided: it lapses auth_lifetime_s after (the run waits for the last one).
  ['auth, left to lapse', 1, async (s) => (await s.pay('auth')) !== null],
  [
    'sale, charged back',
    1,
    async (s) => {
      const id = await s.pay('sale');
      return id !== null && s.pause().then(() => s.chargeback(id));
    },
  ],
  [
    'sale, charged back in part',
    0.5,
    async (s) => {
      const id = await s.pay('sale');
      return id !== null && s.pause().then(() => s.chargeback(id, s.part(0.3)));
    },
  ],
  [
    'sale, refunded in part, charged back in part',
    1,
    async (s) => {
      const id = await s.pay('sale');
      const refunded = s.part(0.2);
      if (id === null || !(await s.pause().then(() => s.operate('refund', refunded)))) return false;
      await s.pause();
      // Less than what is left: the order keeps captured, refunded and disputed money apart.
      return s.chargeback(id, Math.max(1, Math.floor((s.order.amount - refunded) / 2)));
    },
  ],
  [
    'sale, charged back, reversed',
    1,
    async (s) => {
      const id = await s.pay('sale');
      if (id === null) return false;
      await s.pause().then(() => s.chargeback(id));
      return s.pause().then(() => s.reverse(id));
    },
  ],
  [
    'sale, refunded in part, charged back in part, reversed',
    0.5,
    async (s) => {
      const id = await s.pay('sale');
      if (id === null || !(await s.pause().then(() => s.operate('refund', s.part(0.3))))) return false;
      await s.pause().then(() => s.chargeback(id, s.part(0.4)));
      return s.pause().then(() => s.reverse(id));
    },
  ],
  ['declined card', 0.5, (s) => s.decline()],
  [
    'redirect, paid, refunded in part',
    1,
    async (s) => {
      const session = await s.redirect();
      if (session === null) return false;
      await s.pause();
      await s.gateway.settle(session, 'paid');
      await s.pause();
      return s.operate('refund', s.part(0.5));
    },
  ],
  [
    'redirect, paid, charged back, reversed',
    0.5,
    async (s) => {
      const session = await s.redirect();
      if (session === null) return false;
      await s.pause();
      await s.gateway.settle(session, 'paid');
      const { transactionId } = await s.gateway.session(session);
      await s.pause().then(() => s.chargeback(transactionId));
      return s.pause().then(() => s.reverse(transactionId));
    },
  ],
  [
    'redirect, cancelled',
    0.5,
    async (s) => {
      const session = await s.redirect();
      if (session === null) return false;
      await s.pause();
      await s.gateway.settle(session, 'cancelled');
      return true;
    },
  ],
  ['redirect, left open', 0.5, async (s) => (await s.redirect()) !== null],
  // Orders that end (issue 43): called off by the shop, the gateway's part ended first where it can be.
  [
    'auth, cancelled (voided, closed)',
    1,
    async (s) => (await s.pay('auth')) !== null && s.pause().then(() => s.cancel()),
  ],
  ['declined card, cancelled', 0.5, async (s) => (await s.decline()) && s.pause().then(() => s.cancel())],
  [
    'redirect left open, cancelled',
    0.5,
    async (s) => (await s.redirect()) !== null && s.pause().then(() => s.cancel()),
  ],
  ['unpaid, cancelled', 0.25, (s) => s.pause().then(() => s.cancel())],
];

const CURRENCIES = [
  ['EUR', 5],
  ['USD', 2],
  ['GBP', 1],
  ['JPY', 1],
] as const;

export interface StreamResult {
  orders: number;
  /** Stories a fault cut short (the order stays what the gateway made it). */
  cutShort: number;
  /** Orders the kit could not even create (it was unavailable). */
  notCreated: number;
  /** Auths the stories left open, to lapse. */
  leftToLapse: number;
  /** When the last of those lapses (ms; 0: none). */
  lastLapseAt: number;
  /** How many orders each story was told for (cut short or not). */
  told: Record<string, number>;
}

export interface StreamOptions {
  api: { url: string; opsToken: string };
  gateway: GatewayReader;
  random: Random;
  /** A new order every this many ms. */
  everyMs: number;
  /** Stories in flight at most. */
  concurrency: number;
  /** Each story told once, in the list's order, before the random mix: every kind of event there is. */
  eachStoryFirst?: boolean;
  /** Who each order is for (the storm's customers, one of whom it erases); unset: nobody. */
  customers?: OrderCustomers;
  /**
   * Platform mode: each order names a merchant (`merchant_id`), its customer's or one picked at
   * random; unset: the orders name none (the kit's one merchant).
   */
  merchants?: OrderMerchants;
}

/**
 * Who the orders are for (issue 43): asked as each order is about to be made. A claim is settled
 * once: `made` with the order and its story, or `notMade` when the kit made no order of it.
 */
export interface OrderCustomers {
  /** The customer of the next order; null: it names nobody. */
  claim(): CustomerClaim | null;
}

export interface CustomerClaim {
  customer: Customer;
  /** The merchant whose customer it is, when it is one merchant's: the order is that merchant's. */
  merchant?: number;
  /**
   * The order was made; `story` settles when its story ends, and `authOpen` says, while the story
   * runs or after, whether an auth it made is still open (neither captured, voided nor lapsed).
   */
  made(orderId: string, story: Promise<unknown>, authOpen: () => boolean): void;
  notMade(): void;
}

/** Starts orders at a steady rate until `stop()`; `done` settles when the last story has ended. */
export function startStream(o: StreamOptions): { stop(): void; done: Promise<StreamResult> } {
  const api = new KitApi(o.api.url, o.api.opsToken);
  const result: StreamResult = {
    orders: 0,
    cutShort: 0,
    notCreated: 0,
    leftToLapse: 0,
    lastLapseAt: 0,
    told: {},
  };
  let stopped = false;
  const running = new Set<Promise<void>>();
  const firsts = o.eachStoryFirst ? [...STORIES] : [];
  const done = (async () => {
    for (let next = Date.now(); !stopped; next += o.everyMs) {
      await delay(Math.max(0, next - Date.now()));
      while (running.size >= o.concurrency && !stopped) await Promise.race(running);
      if (stopped) break;
      const story = tell(api, o, result, firsts.shift()).finally(() => running.delete(story));
      running.add(story);
    }
    await Promise.all(running);
    return result;
  })();
  return {
    stop: () => {
      stopped = true;
    },
    done,
  };
}

async function tell(
  api: KitApi,
  o: StreamOptions,
  result: StreamResult,
  first?: (typeof STORIES)[number],
): Promise<void> {
  // iDEAL takes EUR only.
  const currency = first?.[0].startsWith('redirect') ? 'EUR' : weighted(o.random, CURRENCIES);
  const [name, story] = first
    ? [first[0], first[2]]
    : weighted(
        o.random,
        STORIES.filter(([name]) => currency === 'EUR' || !name.startsWith('redirect')).map(
          ([name, w, s]) => [[name, s] as const, w] as const,
        ),
      );
  // In minor units: 5.00 to 500.00, or 500 to 50,000 yen.
  const amount = between(o.random, 500, 50_000);
  const claim = o.customers?.claim() ?? null;
  const customer = claim?.customer ?? null;
  const merchant = claim?.merchant ?? o.merchants?.pick();
  const created = await api.call('POST', '/orders', {
    amount: major(amount, currency),
    currency,
    ...(customer === null ? {} : { customer }),
    ...(merchant === undefined ? {} : { merchant_id: merchant }),
  });
  if (created.status !== 201) {
    claim?.notMade();
    result.notCreated += 1;
    return;
  }
  result.orders += 1;
  result.told[name] = (result.told[name] ?? 0) + 1;
  const id = created.body.data.order.id as string;
  if (merchant !== undefined) o.merchants?.made(id, merchant);
  const shopper = new Shopper(api, o.gateway, o.random, { id, currency, amount, customer });
  const told = story(shopper).catch(() => false);
  claim?.made(id, told, () => shopper.lapsesAt !== null && shopper.lapsesAt > Date.now());
  const finished = await told;
  if (!finished) result.cutShort += 1;
  if (shopper.lapsesAt !== null) {
    result.leftToLapse += 1;
    result.lastLapseAt = Math.max(result.lastLapseAt, shopper.lapsesAt);
  }
}
