import { randomBytes } from 'node:crypto';
import { landingStatus, pressButton } from '../test/support/kit.js';
import { delay } from '../test/support/process.js';
import type { Snapshot } from './erasure-verdict.js';
import type { OrderMerchants } from './merchants.js';
import { fetchReport } from './money.js';
import { between, type Random } from './random.js';
import type { Answer, Customer, CustomerClaim, KitApi, OrderCustomers } from './stream.js';
import type { KitTables } from './tables.js';

/**
 * The erasure in the storm (issue 43, part 4): some of the storm's orders name a customer, a few of
 * them the same one; in the middle of the traffic, while payments, refunds, chargebacks and
 * webhooks still flow and whatever fault is under way goes on, the shop's admin forgets that
 * customer through the kit's API (`POST /customers/{id}/erase`), trying again while the kit does not
 * answer, as docs/operations.md says to. Around it: a card saved for them before, which the erasure
 * revokes; a payment of theirs waiting at its 3D Secure challenge, completed after the erasure and
 * then refunded in part; and the report and every order's version read just before and just after,
 * so the verdict (chaos/erasure-verdict.ts) can tell what the erasure itself moved.
 */

const CARD = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' };
/** sandbox.md section 4: a challenge at 3D Secure. */
const CHALLENGE_CARD = { ...CARD, number: '4000000000003220' };

/** The share of orders that name the customer to be erased (until the erasure), and one kept. */
const ERASED_SHARE = 0.1;
const KEPT_SHARE = 0.2;
/**
 * In the run-up to the erasure, more of the orders are theirs, so that some of their payments are
 * under way when it comes: for this long, this share; then the erasure waits (at most RUN_UP_MORE_MS
 * more) until a few of their stories are running.
 */
const RUN_UP_MS = 12_000;
const RUN_UP_SHARE = 0.5;
const RUN_UP_MORE_MS = 15_000;
const RUNNING_AT_ERASURE = 2;
/** The erased customer's orders in the random mix, at most: before the run-up, and in all. */
const ERASED_ORDERS_BEFORE = 6;
const ERASED_ORDERS = 14;
/** Customers who stay: their values must still be in the database (the search sees what is there). */
const KEPT = 3;
/** How long the admin keeps asking while the kit does not answer (a fault under way). */
const ERASE_WITHIN_MS = 150_000;
const ERASE_AGAIN_MS = 2000;
/** How long the orders being made for the customer have to be answered before the erasure. */
const CREATES_WITHIN_MS = 60_000;

/**
 * A customer as a shop sends one: every personal field the kit keeps (src/shared/customer.ts), each
 * value made to be found nowhere else. `n` tells the customers apart (and their addresses).
 */
export function person(role: 'erased' | 'kept', n: number): Customer {
  const tag = randomBytes(4).toString('hex');
  return {
    merchant_customer_id: `chaos-${role}-${n}-${tag}`,
    first_name: `Ada${tag}`,
    last_name: `Lovelace${tag}`,
    email: `ada.${tag}@example.com`,
    phone: `+44 20 7946 ${tag}`,
    address: `${tag} Chaos Lane 12`,
    city: `London${tag}`,
    postal_code: `EC1A ${tag}`,
    country_code: 'GB',
    // Three digits at the end: no address here is the start of another.
    ip_address: `${role === 'erased' ? '203.0.113' : '198.51.100'}.${100 + n}`,
  };
}

/** What must be gone once a customer is erased: every value of theirs but the country's. */
export const personalValues = (c: Customer): string[] =>
  Object.entries(c)
    .filter(([key]) => key !== 'country_code')
    .map(([, value]) => value);

/**
 * Who the storm's orders are for: now and then the customer it erases (until the erasure starts,
 * and at most ERASED_ORDERS of the mix), now and then one of the customers who stay, mostly nobody.
 * In platform mode the customer erased is one merchant's (picked at random): each of their orders is
 * that merchant's, and each request about them names it (`merchant_id`). The customers who stay
 * have orders at any merchant.
 */
export class StormCustomers implements OrderCustomers {
  readonly erased = person('erased', 0);
  readonly kept = Array.from({ length: KEPT }, (_, i) => person('kept', i + 1));
  /** The erased customer's orders the kit made (the mix's, the saved card's, the challenge's). */
  readonly erasedOrders = new Set<string>();
  /** The customers who stay that have an order. */
  readonly keptWithOrders = new Set<Customer>();
  /** Cards saved for the erased customer before the erasure, as the gateway listed them. */
  savedCards = 0;
  #runUp = false;
  #closed = false;
  /** Orders of the erased customer asked for and not yet answered. */
  #creating = 0;
  readonly #running = new Set<Promise<unknown>>();
  readonly #authOpen: (() => boolean)[] = [];
  /** The merchant whose customer the erased one is; undefined: the kit's one merchant. */
  readonly merchant: number | undefined;

  constructor(
    private readonly random: Random,
    private readonly merchants?: OrderMerchants,
  ) {
    this.merchant = merchants?.pick();
  }

  /** `merchant_id` for a body about the erased customer, in platform mode. */
  #named(): { merchant_id?: number } {
    return this.merchant === undefined ? {} : { merchant_id: this.merchant };
  }

  /** `?merchant_id=` for a path about the erased customer, in platform mode ('' without). */
  query(): string {
    return this.merchant === undefined ? '' : `?merchant_id=${this.merchant}`;
  }

  claim(): CustomerClaim | null {
    const r = this.random();
    const share = this.#runUp ? RUN_UP_SHARE : ERASED_SHARE;
    const cap = this.#runUp ? ERASED_ORDERS : ERASED_ORDERS_BEFORE;
    const erasable = !this.#closed && this.#creating + this.erasedOrders.size < cap;
    if (r < share && erasable) return this.#erasedClaim();
    if (r >= share + KEPT_SHARE) return null;
    const customer = this.kept[Math.floor(this.random() * KEPT)]!;
    return {
      customer,
      made: () => void this.keptWithOrders.add(customer),
      notMade: () => {},
    };
  }

  #erasedClaim(): CustomerClaim {
    this.#creating += 1;
    return {
      customer: this.erased,
      merchant: this.merchant,
      made: (orderId, story, authOpen) => {
        this.#creating -= 1;
        this.erasedOrders.add(orderId);
        this.#running.add(story);
        void story.finally(() => this.#running.delete(story));
        this.#authOpen.push(authOpen);
      },
      notMade: () => {
        this.#creating -= 1;
      },
    };
  }

  /**
   * The run-up: for RUN_UP_MS, more orders are theirs; then until a few of their stories are running
   * (at most RUN_UP_MORE_MS more).
   */
  async runUp(): Promise<void> {
    this.#runUp = true;
    await delay(RUN_UP_MS);
    const deadline = Date.now() + RUN_UP_MORE_MS;
    while (this.#running.size < RUNNING_AT_ERASURE && Date.now() < deadline) await delay(100);
  }

  /**
   * No new order names the erased customer from now on; resolves once every one asked for has been
   * answered (an order made after the erasure is not the erasure's to find).
   */
  async close(): Promise<void> {
    this.#closed = true;
    const deadline = Date.now() + CREATES_WITHIN_MS;
    while (this.#creating > 0 && Date.now() < deadline) await delay(100);
  }

  /** The erased customer's stories still running, and their auths still open. */
  inFlight(): { stories: number; auths: number } {
    return { stories: this.#running.size, auths: this.#authOpen.filter((open) => open()).length };
  }

  /** A new order for the erased customer, through the kit's API; null when the kit made none. */
  async order(api: KitApi): Promise<{ id: string; amount: number } | null> {
    const amount = between(this.random, 500, 50_000);
    const created = await api.call('POST', '/orders', {
      amount: euros(amount),
      currency: 'EUR',
      customer: this.erased,
      ...this.#named(),
    });
    if (created.status !== 201) return null;
    const id = created.body.data.order.id as string;
    this.erasedOrders.add(id);
    if (this.merchant !== undefined) this.merchants?.made(id, this.merchant);
    return { id, amount };
  }

  /**
   * Before the storm: the shop's server vouches for the customer (a customer token, an audit line
   * naming their id), and their first order is paid with `save_card`, as docs/saved-cards.md shows;
   * then the gateway lists the cards it holds for them at their merchant. Answers what went wrong, or
   * null.
   */
  async saveCard(
    api: KitApi,
    activeCards: (id: string, merchant?: number) => Promise<string[]>,
  ): Promise<string | null> {
    const id = this.erased.merchant_customer_id!;
    const vouched = await api.call('POST', `/customers/${id}/tokens`, this.#named(), api.operator);
    if (vouched.status !== 201) return `the customer's token: ${said(vouched)}`;
    const order = await this.order(api);
    if (order === null) return 'the order that saves the card was not made';
    const body = { card: CARD, mode: 'sale', save_card: true, customer: this.erased };
    const headers = { 'customer-token': String(vouched.body.data.customer_token) };
    const paid = await api.call('POST', `/orders/${order.id}/pay/card`, body, headers);
    if (paid.status !== 200 || paid.body.data.order.status !== 'paid')
      return `the payment that saves the card: ${said(paid)}`;
    this.savedCards = (await activeCards(id, this.merchant)).length;
    return this.savedCards > 0 ? null : 'the gateway lists no card saved for the customer';
  }
}

const euros = (minor: number) => (minor / 100).toFixed(2);
const said = (a: Answer) => `${a.status} ${a.body?.code ?? ''} ${a.body?.message ?? ''}`.trim();

/** What the erasure in the storm did. */
export interface ErasureRun {
  /** The kit's answer to the erasure that went through (`data`); null: none did within the bound. */
  answer: Record<string, unknown> | null;
  /** The requests it took (those the kit did not answer, or answered 5xx, first). */
  tries: number;
  /** From the first request to the answer that went through. */
  seconds: number;
  /** At the moment of the first request: the customer's stories still running, and auths left open. */
  inFlight: { stories: number; auths: number };
  /** A payment of theirs at its 3D Secure challenge across the erasure: what came of it after; null: none was open. */
  challenge: string | null;
  /** The report and the orders' versions just before the first request and just after the answer. */
  before: Snapshot | null;
  after: Snapshot | null;
}

/**
 * The erasure, in the middle of the traffic: no more orders for the customer, a payment of theirs
 * left at its challenge, the report read, the erasure asked for until the kit answers it, the report
 * read again, then the challenge completed and the payment refunded in part.
 */
export async function eraseMidStorm(o: {
  api: KitApi;
  tables: KitTables;
  customers: StormCustomers;
  /** The storm's start: the report covers every order from it. */
  from: Date;
  /** When to erase, from now (ms): the run-up comes before. */
  atMs: number;
  log: (line: string) => void;
}): Promise<ErasureRun> {
  const { api, customers } = o;
  await delay(Math.max(0, o.atMs - RUN_UP_MS));
  await customers.runUp();
  await customers.close();
  const challenge = await openChallenge(api, customers);
  const inFlight = customers.inFlight();
  const before = await snapshot(o, 'before');
  const started = Date.now();
  const id = customers.erased.merchant_customer_id!;
  let answer: Answer = { status: 0, body: null };
  let tries = 0;
  while (Date.now() - started < ERASE_WITHIN_MS) {
    tries += 1;
    const path = `/customers/${encodeURIComponent(id)}/erase${customers.query()}`;
    answer = await api.call('POST', path, undefined, api.operator);
    if (answer.status !== 0 && answer.status < 500) break;
    await delay(ERASE_AGAIN_MS);
  }
  const seconds = (Date.now() - started) / 1000;
  const done = answer.status === 200;
  o.log(
    `erasure: ${done ? 'done' : `not done (${said(answer)})`} in ${tries} request(s), ${seconds.toFixed(1)} s, ` +
      `with ${inFlight.stories} of the customer's stories running and ${inFlight.auths} auths open` +
      (done ? `; the kit's answer ${JSON.stringify(answer.body.data)}` : ''),
  );
  const after = await snapshot(o, 'after');
  const completed = challenge && (await completeChallenge(api, challenge));
  o.log(`erasure: the payment at its 3DS challenge across it: ${completed ?? 'none was open'}`);
  return {
    answer: done ? answer.body.data : null,
    tries,
    seconds,
    inFlight,
    challenge: completed,
    before,
    after,
  };
}

interface OpenChallenge {
  orderId: string;
  amount: number;
  url: string;
}

/** A card payment of the erased customer's, stopped at its 3D Secure challenge; null when the kit made none. */
async function openChallenge(api: KitApi, customers: StormCustomers): Promise<OpenChallenge | null> {
  const order = await customers.order(api);
  if (order === null) return null;
  const body = { card: CHALLENGE_CARD, mode: 'sale', customer: customers.erased };
  const paying = await api.call('POST', `/orders/${order.id}/pay/card`, body);
  const url = paying.body?.data?.next_action?.url;
  return paying.status === 200 && typeof url === 'string'
    ? { orderId: order.id, amount: order.amount, url }
    : null;
}

/** The shopper passes the challenge after the erasure; the shop then refunds a quarter of the payment. */
async function completeChallenge(api: KitApi, c: OpenChallenge): Promise<string> {
  try {
    const landing = await pressButton(c.url, 'authenticate');
    const page = await fetch(landing, { signal: AbortSignal.timeout(40_000) });
    const status = landingStatus(await page.text()) ?? `HTTP ${page.status}`;
    if (status !== 'paid') return `its landing after the erasure says ${status}`;
    const refund = { amount: euros(Math.max(1, Math.floor(c.amount / 4))), reason: 'chaos' };
    const refunded = await api.operate(c.orderId, 'refund', refund);
    return refunded.status === 200
      ? 'paid after the erasure, then refunded in part'
      : `paid after the erasure; its refund answered ${said(refunded)}`;
  } catch (error) {
    return `cut short: ${(error as Error).message}`;
  }
}

/**
 * Every order's version, then the report (before the erasure), or the report, then the versions
 * (after it): whatever moved an order while the report was read shows in its version. Null when the
 * kit or its database did not answer within a minute.
 */
async function snapshot(
  o: { api: KitApi; tables: KitTables; from: Date; log: (line: string) => void },
  when: 'before' | 'after',
): Promise<Snapshot | null> {
  const report = () => fetchReport({ url: o.api.url, opsToken: o.api.opsToken }, o.from);
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if (when === 'before') {
        const versions = await o.tables.versions();
        return { versions, rows: (await report()).rows };
      }
      const { rows } = await report();
      return { versions: await o.tables.versions(), rows };
    } catch (error) {
      if (Date.now() > deadline) {
        o.log(`erasure: the report ${when} it could not be read: ${(error as Error).message}`);
        return null;
      }
      await delay(ERASE_AGAIN_MS);
    }
  }
}
