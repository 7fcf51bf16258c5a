import { expect } from 'chai';
import type { Actor, OperatorRole } from '../../../src/merchant/operators/roles.js';
import { oneMerchant } from '../../../src/merchant/orders/order-merchant.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { card } from '../../support/gateway.js';
import { cliEnv, startTestKit, type TestKit } from '../../support/kit.js';
import { LINKED, PLATFORM_ENV, platformSeed } from '../../support/platform.js';
import { exitWithin, freePort, start } from '../../support/process.js';

/**
 * Issue 45, part 2, through HTTP against a kit acting for merchants 1001 and 1004 with a partner key
 * (test/support/platform.ts): credentials scoped to some merchants, and customers per merchant. A
 * credential scoped to 1004 gets, for a 1001 order, the very answer of an order that does not exist
 * on every order route; lists show it its merchants' orders alone; it makes orders for them alone.
 * The same customer id at both merchants is two customers: each lists its own cards, a token for
 * one is no token for the other, and erasing one leaves the other as it was.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const NOBODY = 'ord_nobody0000000000000000';

describe('merchant: credentials and customers per merchant (issue 45, part 2)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  const token: Record<string, string> = {};
  /** An order of each merchant, made by the bootstrap token (every merchant's). */
  const order: Record<number, string> = {};

  const add = async (name: string, role: OperatorRole, merchants?: number[]) =>
    (token[name] = (await t.kit.store.operators.add({ name, role, merchants, by: CLI })).token);

  const newOrder = async (
    merchantId: number,
    customer?: string,
    as: { ops?: boolean; token?: string } = { ops: true },
  ) => {
    const res = await t.call('POST', '/orders', {
      ...as,
      body: {
        amount: '12.00',
        currency: 'EUR',
        merchant_id: merchantId,
        ...(customer ? { customer: { merchant_customer_id: customer, email: 'ada@example.com' } } : {}),
      },
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.order.merchant_id).to.equal(merchantId);
    return res.body.data.order.id as string;
  };

  before(async () => {
    t = await startTestKit({ seed: platformSeed, env: PLATFORM_ENV });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    await add('outlet-ops', 'operator', [1004]);
    await add('outlet-finance', 'finance', [1004]);
    await add('outlet-viewer', 'viewer', [1004]);
    await add('outlet-shop', 'storefront', [1004]);
    await add('group-ops', 'operator');
    await add('both-viewer', 'viewer', [...LINKED]);
    order[1001] = await newOrder(1001);
    order[1004] = await newOrder(1004);
  });
  after(async () => {
    await t?.close();
  });

  /** Every route that takes an order id with a credential, as the credential that may use it sends it. */
  const orderRoutes: [string, string, string, unknown?, Record<string, string>?][] = [
    ['outlet-viewer', 'GET', '/orders/:id'],
    ['outlet-ops', 'POST', '/orders/:id/capture', {}],
    ['outlet-ops', 'POST', '/orders/:id/refund', { amount: '1.00' }, { 'idempotency-key': 'scoped-refund' }],
    ['outlet-ops', 'POST', '/orders/:id/void', {}],
    ['outlet-ops', 'POST', '/orders/:id/cancel', {}],
    ['outlet-shop', 'POST', '/orders/:id/cancel', {}],
    ['outlet-shop', 'POST', '/orders/:id/payment-link', { payment_method: 'psc', expires_in: 3600 }],
    ['outlet-finance', 'POST', '/orders/:id/review', { resolution: 'accepted', note: 'looked' }],
    ['outlet-shop', 'POST', '/orders/:id/pay/redirect', { payment_method: 'psc' }],
    ['outlet-shop', 'POST', '/orders/:id/pay/card', { card: card(), mode: 'sale' }],
    ['outlet-ops', 'POST', '/orders/:id/pay/redirect', { payment_method: 'psc' }],
  ];

  it('a credential scoped to 1004 gets, for a 1001 order, the answer of an order that does not exist, on every order route', async () => {
    for (const [who, method, path, body, headers] of orderRoutes) {
      const send = (id: string) =>
        t.call(method, path.replace(':id', id), { token: token[who], body, headers, secret: null });
      const [theirs, unknown] = [await send(order[1001]!), await send(NOBODY)];
      expect(unknown.status, `${method} ${path} (unknown): ${unknown.text}`).to.equal(404);
      expect(theirs.status, `${method} ${path} as ${who}: ${theirs.text}`).to.equal(404);
      documented.check(theirs, method, path.replace(':id', '{id}'));
      const { request_id: _a, ...said } = theirs.body;
      const { request_id: _b, ...unknownSaid } = unknown.body;
      expect(said, `${method} ${path}`).to.deep.equal(unknownSaid);
    }
    // Nothing happened to the order: no attempt, no link, no history but its making.
    const seen = await t.call('GET', `/orders/${order[1001]}`, { ops: true });
    expect(seen.body.data.order.status).to.equal('pending');
    expect(seen.body.data.order.history.map((h: { event: string }) => h.event)).to.not.include('cancelled');
  });

  it('the same credential reaches its own merchant’s order on the same routes', async () => {
    const read = await t.call('GET', `/orders/${order[1004]}`, { token: token['outlet-viewer'] });
    expect(read.status, read.text).to.equal(200);
    expect(read.body.data.order.merchant_id).to.equal(1004);
    const link = await t.call('POST', `/orders/${order[1004]}/payment-link`, {
      token: token['outlet-shop'],
      body: { payment_method: 'psc', expires_in: 3600 },
    });
    expect(link.status, link.text).to.equal(201);
    // Past the door: the order has no payment to refund (409), not an order nobody has (404).
    const refund = await t.call('POST', `/orders/${order[1004]}/refund`, {
      token: token['outlet-ops'],
      body: { amount: '1.00' },
      headers: { 'idempotency-key': 'own-refund' },
    });
    expect(refund.status, refund.text).to.equal(409);
  });

  it('lists show a scoped credential its merchants’ orders alone; merchant_id filters, and naming another merchant is a 403 naming it', async () => {
    const ids = async (who: string, query = '') => {
      const res = await t.call('GET', `/orders?limit=1000${query}`, { token: token[who] });
      expect(res.status, res.text).to.equal(200);
      return (res.body.data.orders as { id: string; merchant_id: number }[]).map((o) => o.id);
    };
    const outlet = await ids('outlet-viewer');
    expect(outlet).to.include(order[1004]).and.not.include(order[1001]);
    expect(await ids('outlet-viewer', '&merchant_id=1004')).to.deep.equal(outlet);
    const queue = await t.call('GET', '/orders?needs_review=true', { token: token['outlet-finance'] });
    expect(queue.status, queue.text).to.equal(200);
    for (const o of queue.body.data.orders) expect(o.merchant_id).to.equal(1004);

    const other = await t.call('GET', '/orders?merchant_id=1001', { token: token['outlet-viewer'] });
    expect(other.status, other.text).to.equal(403);
    expect(other.body.errors).to.have.property('merchant_id');
    expect(other.body.data).to.deep.equal({ role: 'viewer', merchant_ids: [1004] });
    documented.check(other, 'GET', '/orders');
    const unserved = await t.call('GET', '/orders?merchant_id=1002', { ops: true });
    expect(unserved.status, unserved.text).to.equal(422);
    expect(unserved.body.errors).to.have.property('merchant_id');

    // Unscoped, and scoped to both: every merchant's; the filter takes one.
    for (const who of ['group-ops', 'both-viewer']) {
      const all = await t.call('GET', '/orders?limit=1000', { token: token[who] });
      const listed = (all.body.data.orders as { id: string }[]).map((o) => o.id);
      expect(listed, who).to.include(order[1001]).and.include(order[1004]);
      expect(await ids(who, '&merchant_id=1001'), who)
        .to.include(order[1001])
        .and.not.include(order[1004]);
    }
    const disputes = await t.call('GET', '/disputes', { token: token['outlet-viewer'] });
    expect(disputes.status, disputes.text).to.equal(200);
    const otherDisputes = await t.call('GET', '/disputes?merchant_id=1001', {
      token: token['outlet-viewer'],
    });
    expect(otherDisputes.status, otherDisputes.text).to.equal(403);
  });

  it('POST /orders: a credential scoped to one merchant makes its orders by default, never another’s', async () => {
    const made = await t.call('POST', '/orders', {
      token: token['outlet-shop'],
      body: { amount: '3.00', currency: 'EUR', reference: `outlet-${Date.now()}` },
    });
    expect(made.status, made.text).to.equal(201);
    expect(made.body.data.order.merchant_id).to.equal(1004);
    for (const body of [
      { amount: '3.00', currency: 'EUR', merchant_id: 1001 },
      { amount: '3.00', currency: 'EUR', merchant_id: 1001, reference: `not-outlet-${Date.now()}` },
    ]) {
      const refused = await t.call('POST', '/orders', { token: token['outlet-shop'], body });
      expect(refused.status, refused.text).to.equal(403);
      expect(refused.body.errors.merchant_id[0]).to.contain('scoped to (1004)');
    }
    // Scoped to both, or to none: which one must be said.
    for (const as of [{ token: token['both-viewer'] }, { ops: true }]) {
      const unsaid = await t.call('POST', '/orders', { ...as, body: { amount: '3.00', currency: 'EUR' } });
      expect(unsaid.status, unsaid.text).to.equal(422);
      expect(unsaid.body.errors.merchant_id[0]).to.contain('is required');
    }
    expect(await newOrder(1001, undefined, { token: token['group-ops'] })).to.match(/^ord_/);
  });

  it("a scoped credential's report, audit export and money with no order hold its merchants' alone", async () => {
    const day = new Date().toISOString().slice(0, 10);
    const next = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const range = `from=${day}&to=${next}`;
    const report = await t.call('GET', `/reports/reconciliation?${range}`, {
      token: token['outlet-finance'],
    });
    expect(report.status, report.text).to.equal(200);
    const merchants = new Set(report.body.data.rows.map((r: { merchant_id: number }) => r.merchant_id));
    expect([...merchants], "1004's rows alone").to.deep.equal([1004]);
    expect(report.body.data.rows.map((r: { order_id: string }) => r.order_id)).to.include(order[1004]);
    expect(report.body.data.unmatched_money.rows, 'no money with no order here').to.deep.equal([]);
    documented.check(report, 'GET', '/reports/reconciliation');
    const every = await t.call('GET', `/reports/reconciliation?${range}`, { ops: true });
    expect(every.body.data.rows.map((r: { order_id: string }) => r.order_id)).to.include(order[1001]);
    const other = await t.call('GET', `/reports/reconciliation?${range}&merchant_id=1001`, {
      token: token['outlet-finance'],
    });
    expect(other.status, other.text).to.equal(403);
    expect(other.body.data.merchant_ids).to.deep.equal([1004]);

    const audit = await t.call('GET', `/audit?${range}&format=json`, { token: token['outlet-finance'] });
    expect(audit.status, audit.text).to.equal(200);
    // Acts about each merchant's orders: a cancel writes an audit line (order.cancel).
    for (const merchant of [1001, 1004]) {
      const id = await newOrder(merchant);
      const cancel = await t.call('POST', `/orders/${id}/cancel`, { ops: true, body: { reason: 'test' } });
      expect(cancel.status, cancel.text).to.equal(200);
    }
    const whose = (answer: typeof audit) =>
      new Set((answer.body.data.entries as { merchant_id: number | null }[]).map((e) => e.merchant_id));
    const everyLine = await t.call('GET', `/audit?${range}&format=json`, { ops: true });
    expect([...whose(everyLine)], 'the bootstrap token reads both merchants').to.include.members([
      1001, 1004,
    ]);
    const scoped = await t.call('GET', `/audit?${range}&format=json`, { token: token['outlet-finance'] });
    expect([...whose(scoped)], "lines about 1004's orders alone").to.deep.equal([1004]);
    documented.check(audit, 'GET', '/audit');

    // Its merchants' money with no order (none here: platform-unmatched.test.ts has some); naming
    // another merchant is a 403 naming it.
    const unmatched = await t.call('GET', '/unmatched-money', { token: token['outlet-viewer'] });
    expect(unmatched.status, unmatched.text).to.equal(200);
    documented.check(unmatched, 'GET', '/unmatched-money');
    const theirs = await t.call('GET', '/unmatched-money?merchant_id=1001', {
      token: token['outlet-viewer'],
    });
    expect(theirs.status, theirs.text).to.equal(403);
    expect(theirs.body.data.merchant_ids).to.deep.equal([1004]);
    documented.check(theirs, 'GET', '/unmatched-money');
  });

  it('GET /payment-methods names its merchant where the kit serves several', async () => {
    const unsaid = await t.call('GET', '/payment-methods?currency=EUR');
    expect(unsaid.status, unsaid.text).to.equal(422);
    expect(unsaid.body.errors).to.have.property('merchant_id');
    const outlet = await t.call('GET', '/payment-methods?currency=EUR&merchant_id=1004');
    expect(outlet.status, outlet.text).to.equal(200);
    expect(
      outlet.body.data.payment_methods.map((m: { payment_method: string }) => m.payment_method),
    ).to.include('psc');
    const scoped = await t.call('GET', '/payment-methods?currency=EUR', { token: token['outlet-shop'] });
    expect(scoped.status, scoped.text).to.equal(200);
    const notServed = await t.call('GET', '/payment-methods?currency=EUR&merchant_id=1002');
    expect(notServed.status, notServed.text).to.equal(422);
  });

  describe('the same customer id at both merchants', () => {
    const customer = `cus-both-${process.pid}`;
    let cardAt1001 = '';
    let orderAt1004 = '';
    const mint = async (body: Record<string, unknown>) => {
      const res = await t.call('POST', `/customers/${customer}/tokens`, { ops: true, body });
      expect(res.status, res.text).to.equal(201);
      return res.body.data.customer_token as string;
    };
    const cardsAt = (merchantId: number, customerToken: string) =>
      t.call('GET', `/customers/${customer}/cards?merchant_id=${merchantId}`, {
        headers: { 'customer-token': customerToken },
      });

    before(async () => {
      // 1001's customer saves a card paying a 1001 order (only 1001 pays by card here: 1004 has no key).
      const paying = await newOrder(1001, customer);
      const paid = await t.call('POST', `/orders/${paying}/pay/card`, {
        body: { card: card(), mode: 'sale', save_card: true },
        headers: { 'customer-token': await mint({ merchant_id: 1001 }) },
      });
      expect(paid.status, paid.text).to.equal(200);
      expect(paid.body.data.order.status).to.equal('paid');
      // 1004's customer of the same id has an order too.
      orderAt1004 = await newOrder(1004, customer);
    });

    it("each merchant lists its own customer's cards: 1001's card is not 1004's", async () => {
      const at1001 = await cardsAt(1001, await mint({ merchant_id: 1001 }));
      expect(at1001.status, at1001.text).to.equal(200);
      expect(at1001.body.data.cards).to.have.length(1);
      cardAt1001 = at1001.body.data.cards[0].id;
      const at1004 = await cardsAt(1004, await mint({ merchant_id: 1004 }));
      expect(at1004.status, at1004.text).to.equal(200);
      expect(at1004.body.data.cards).to.deep.equal([]);
      // An operator alike: each merchant's own, and 1004's scoped operator 1004's alone (its default).
      const byOps = await t.call('GET', `/customers/${customer}/cards?merchant_id=1004`, { ops: true });
      expect(byOps.body.data.cards).to.deep.equal([]);
      const outlet = await t.call('GET', `/customers/${customer}/cards`, { token: token['outlet-viewer'] });
      expect(outlet.status, outlet.text).to.equal(200);
      expect(outlet.body.data.cards).to.deep.equal([]);
      const notTheirs = await t.call('GET', `/customers/${customer}/cards?merchant_id=1001`, {
        token: token['outlet-viewer'],
      });
      expect(notTheirs.status, notTheirs.text).to.equal(403);
      expect(notTheirs.body.errors).to.have.property('merchant_id');
      documented.check(notTheirs, 'GET', '/customers/{id}/cards');
      const unsaid = await t.call('GET', `/customers/${customer}/cards`, { ops: true });
      expect(unsaid.status, unsaid.text).to.equal(422);
      expect(unsaid.body.errors).to.have.property('merchant_id');
    });

    it("a customer token of one merchant's customer is no token for the other's", async () => {
      const at1004 = await cardsAt(1001, await mint({ merchant_id: 1004 }));
      expect(at1004.status, at1004.text).to.equal(401);
      expect(at1004.body.code).to.equal('CUSTOMER_TOKEN_INVALID');
      const at1001 = await cardsAt(1004, await mint({ merchant_id: 1001 }));
      expect(at1001.status, at1001.text).to.equal(401);
      // A token minted for an order carries the order's merchant: 1004's order's token lists 1004's.
      const forOrder = await mint({ order_id: orderAt1004 });
      expect((await cardsAt(1004, forOrder)).status).to.equal(200);
      expect((await cardsAt(1001, forOrder)).status).to.equal(401);
      const mismatch = await t.call('POST', `/customers/${customer}/tokens`, {
        ops: true,
        body: { order_id: orderAt1004, merchant_id: 1001 },
      });
      expect(mismatch.status, mismatch.text).to.equal(422);
      expect(mismatch.body.errors).to.have.property('merchant_id');
    });

    it("1001's card pays nothing of 1004's customer: neither their order nor an operator's charge", async () => {
      const pay = await t.call('POST', `/orders/${orderAt1004}/pay/saved`, {
        body: { card: cardAt1001, mode: 'sale' },
        headers: { 'customer-token': await mint({ order_id: orderAt1004 }) },
      });
      expect(pay.status, pay.text).to.equal(404);
      expect(pay.body.code).to.equal('CARD_NOT_FOUND');
      const charge = await t.call('POST', `/customers/${customer}/charges`, {
        token: token['outlet-ops'],
        body: { card: cardAt1001, amount: '2.00', currency: 'EUR', mode: 'sale' },
        headers: { 'idempotency-key': 'outlet-charge' },
      });
      expect(charge.status, charge.text).to.equal(404);
      expect(charge.body.code).to.equal('CARD_NOT_FOUND');
      const remove = await t.call('DELETE', `/customers/${customer}/cards/${cardAt1001}?merchant_id=1004`, {
        token: token['group-ops'],
      });
      expect(remove.status, remove.text).to.equal(404);
    });

    it("erasing 1001's customer leaves 1004's customer of the same id as they were", async () => {
      // 1004's customer has a card the kit keeps (put there as a list from the gateway would).
      const kept = await t.kit.store.savedCards.remember(
        customer,
        { vaultToken: `vt_outlet_${process.pid}`, brand: 'visa', last4: '1111', expMonth: 12, expYear: 2034 },
        null,
        undefined,
        oneMerchant(1004, LINKED),
      );
      expect(kept?.merchant_id).to.equal(1004);
      const unsaid = await t.call('POST', `/customers/${customer}/erase`, { ops: true });
      expect(unsaid.status, unsaid.text).to.equal(422);
      expect(unsaid.body.errors).to.have.property('merchant_id');
      const erased = await t.call('POST', `/customers/${customer}/erase?merchant_id=1001`, { ops: true });
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.body.data.orders).to.equal(1);
      expect(erased.body.data.saved_cards.removed).to.equal(1);
      // 1004's customer: their order names them still, their card is kept.
      const theirs = await t.call('GET', `/orders/${orderAt1004}`, { ops: true });
      expect(theirs.body.data.order.customer.merchant_customer_id).to.equal(customer);
      const cards = await t.kit.store.savedCards.list(customer, oneMerchant(1004, LINKED));
      expect(cards.map((c) => c.id)).to.deep.equal([kept!.id]);
      expect(await t.kit.store.savedCards.list(customer, oneMerchant(1001, LINKED))).to.deep.equal([]);
      // Each erasure names its own customer: the references differ.
      const again = await t.call('POST', `/customers/${customer}/erase?merchant_id=1004`, { ops: true });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.orders).to.equal(1);
      expect(again.body.data.customer.reference).to.not.equal(erased.body.data.customer.reference);
    });
  });

  describe('the command line', () => {
    const cli = async (...args: string[]) => {
      const env = { ...cliEnv(t), ...PLATFORM_ENV, GATEWAY_PORT: String(await freePort()) };
      const p = start('src/cli.ts', args, env);
      const { code } = await exitWithin(p, 60_000);
      return { code, out: p.stdout(), err: p.stderr() };
    };

    it('operator add --merchants scopes a token to merchants the kit serves, and refuses another, naming it', async () => {
      const stray = await cli(
        'operator',
        'add',
        'stray-shop',
        '--role',
        'storefront',
        '--merchants',
        '1004,1002',
      );
      expect(stray.code).to.equal(1);
      expect(stray.err.trim()).to.equal(
        '--merchants: names merchant 1002, which this kit does not act for (GATEWAY_MERCHANTS: 1001, 1004)',
      );
      const added = await cli('operator', 'add', 'outlet-cli', '--role', 'storefront', '--merchants', '1004');
      expect(added.code, added.err).to.equal(0);
      expect(added.out).to.match(/operator outlet-cli added: role storefront, merchants 1004, id opr_\w+/);
      const issued = /^(kop_[A-Za-z0-9_-]{43})$/m.exec(added.out)![1]!;
      const made = await t.call('POST', '/orders', {
        token: issued,
        body: { amount: '1.00', currency: 'EUR', reference: `cli-outlet-${Date.now()}` },
      });
      expect(made.status, made.text).to.equal(201);
      expect(made.body.data.order.merchant_id).to.equal(1004);
      const listed = JSON.parse((await cli('operator', 'list')).out) as {
        name: string;
        merchant_ids: unknown;
      }[];
      expect(listed.find((o) => o.name === 'outlet-cli')?.merchant_ids).to.deep.equal([1004]);
    });

    it('customers erase and cards name their merchant where the kit serves several', async () => {
      const unsaid = await cli('customers', 'erase', 'cus-cli');
      expect(unsaid.code).to.equal(1);
      expect(unsaid.err.trim()).to.equal('--merchant: is required: this kit acts for merchants 1001, 1004');
      const cards = await cli('customers', 'cards', 'cus-cli', '--merchant', '1004');
      expect(cards.code, cards.err).to.equal(0);
      expect(JSON.parse(cards.out)).to.deep.equal([]);
    });
  });
});
