import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { rows } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Issue 41, part 1, through HTTP: a saved card moves money only within what a shopper's presence can
 * justify. The attack of the security review: a leaked storefront credential mints a token for any
 * customer, makes an order in their name for 999.00 EUR and pays it with their saved card. Now a
 * token minted without an order never pays, one minted for an order pays that order alone, a
 * customer's saved cards pay at most SAVED_CARD_DAILY_PAYMENTS times and SAVED_CARD_DAILY_AMOUNT in
 * 24 hours (past that an operator charges), minting is limited per credential, and each minting and
 * each payment leaves an audit line naming the credential that vouched and the order.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };

describe('merchant: saved cards pay only for the checkout they were vouched for (issue 41)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  let storefront = { token: '', id: '' };

  before(async () => {
    t = await startTestKit({
      env: {
        SAVED_CARD_DAILY_PAYMENTS: '3',
        SAVED_CARD_DAILY_AMOUNT: '100.00',
        LIMIT_CUSTOMER_TOKENS_PER_CREDENTIAL: '30/1h',
      },
    });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    const added = await t.kit.store.operators.add({ name: 'shop-web', role: 'storefront', by: CLI });
    storefront = { token: added.token, id: added.operator.id };
  });
  after(async () => {
    await t?.close();
  });

  let customers = 0;
  const newCustomer = () => `cus-bound-${process.pid}-${++customers}`;
  const mint = (customerId: string, orderId?: string, token = storefront.token) =>
    t.call('POST', `/customers/${customerId}/tokens`, {
      token,
      ...(orderId === undefined ? {} : { body: { order_id: orderId } }),
    });
  const minted = async (customerId: string, orderId?: string) => {
    const res = await mint(customerId, orderId);
    expect(res.status, res.text).to.equal(201);
    documented.check(res, 'POST', '/customers/{id}/tokens');
    expect(res.body.data.order_id).to.equal(orderId ?? null);
    return res.body.data.customer_token as string;
  };
  const newOrder = async (customerId: string | null, amount: string) => {
    const res = await t.call('POST', '/orders', {
      body: {
        amount,
        currency: 'EUR',
        ...(customerId ? { customer: { merchant_customer_id: customerId } } : {}),
      },
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.data.order as { id: string; reference: string };
  };
  const paySaved = (token: string, orderId: string, cardId: string) =>
    t.call('POST', `/orders/${orderId}/pay/saved`, {
      body: { card: cardId, mode: 'sale' },
      headers: { 'customer-token': token },
    });
  /** A customer with a card saved by a paid card payment (3DS frictionless), and their cards-only token. */
  const customerWithCard = async () => {
    const customerId = newCustomer();
    const token = await minted(customerId);
    const order = await newOrder(customerId, '5.00');
    const paid = await t.call('POST', `/orders/${order.id}/pay/card`, {
      body: { card: card(), mode: 'sale', save_card: true },
      headers: { 'customer-token': token },
    });
    expect(paid.status, paid.text).to.equal(200);
    expect(paid.body.data.order.status).to.equal('paid');
    const listed = await t.call('GET', `/customers/${customerId}/cards`, {
      headers: { 'customer-token': token },
    });
    return { customerId, token, cardId: listed.body.data.cards[0].id as string };
  };
  const gatewaySales = (reference: string) =>
    [...t.kit.sandbox!.deps.state.transactions.values()].filter((x) => x.reference === reference);

  it('a token minted without an order lists and removes cards, and pays nothing (403 CUSTOMER_TOKEN_NOT_FOR_ORDER)', async () => {
    const { customerId, token, cardId } = await customerWithCard();
    expect(token).to.match(/^ct1\./);
    const order = await newOrder(customerId, '20.00');
    const res = await paySaved(token, order.id, cardId);
    expect(res.status, res.text).to.equal(403);
    expect(res.body.code).to.equal('CUSTOMER_TOKEN_NOT_FOR_ORDER');
    documented.check(res, 'POST', '/orders/{id}/pay/saved');
    expect(gatewaySales(order.reference)).to.deep.equal([]);
    expect(
      (await t.call('GET', `/customers/${customerId}/cards`, { headers: { 'customer-token': token } }))
        .status,
    ).to.equal(200);
  });

  it('a token minted for one order pays that order alone; minting for an order of another customer, or of none, is 422 naming order_id', async () => {
    const { customerId, cardId } = await customerWithCard();
    const first = await newOrder(customerId, '10.00');
    const second = await newOrder(customerId, '11.00');
    const forFirst = await minted(customerId, first.id);
    expect(forFirst).to.match(/^ct2\./);
    const wrong = await paySaved(forFirst, second.id, cardId);
    expect(wrong.status, wrong.text).to.equal(403);
    expect(wrong.body.code).to.equal('CUSTOMER_TOKEN_NOT_FOR_ORDER');
    expect(gatewaySales(second.reference)).to.deep.equal([]);
    const right = await paySaved(forFirst, first.id, cardId);
    expect(right.status, right.text).to.equal(200);
    expect(right.body.data.order.status).to.equal('paid');

    const someoneElses = await newOrder(newCustomer(), '12.00');
    const nobodys = await newOrder(null, '12.00');
    for (const orderId of [someoneElses.id, nobodys.id, 'ord_doesnotexist000000000000']) {
      const refused = await mint(customerId, orderId);
      expect(refused.status, refused.text).to.equal(422);
      expect(Object.keys(refused.body.errors)).to.deep.equal(['order_id']);
    }
  });

  it('the attack: a storefront credential alone pays a customer at most the daily bound, then 409 SAVED_CARD_LIMIT; each step in the audit log', async () => {
    const victim = await customerWithCard();
    // Minted without an order: refused at the payment.
    const big = await newOrder(victim.customerId, '999.00');
    const cardsOnly = await minted(victim.customerId);
    expect((await paySaved(cardsOnly, big.id, victim.cardId)).status).to.equal(403);
    // Minted for the 999.00 order: past the amount bound (100.00 EUR a day).
    const overAmount = await paySaved(await minted(victim.customerId, big.id), big.id, victim.cardId);
    expect(overAmount.status, overAmount.text).to.equal(409);
    expect(overAmount.body.code).to.equal('SAVED_CARD_LIMIT');
    documented.check(overAmount, 'POST', '/orders/{id}/pay/saved');
    expect(gatewaySales(big.reference)).to.deep.equal([]);
    // Small orders, one token each: three pay, the fourth is refused (3 payments a day).
    const answers: number[] = [];
    const small: string[] = [];
    for (let i = 0; i < 4; i++) {
      const order = await newOrder(victim.customerId, '20.00');
      small.push(order.id);
      const res = await paySaved(await minted(victim.customerId, order.id), order.id, victim.cardId);
      answers.push(res.status);
      if (res.status === 409) {
        expect(res.body.code).to.equal('SAVED_CARD_LIMIT');
        expect(res.body.data).to.include({ payments: 3, most_payments: 3, most_amount: 10000 });
        expect(gatewaySales(order.reference)).to.deep.equal([]);
      }
    }
    expect(answers).to.deep.equal([200, 200, 200, 409]);
    // An operator can still charge it: the audited, merchant-initiated route.
    // The audit: a line for each token minted (who vouched, for which order) and each payment made.
    const audit = await rows(t, 'audit_log', { credential: storefront.id }, 'id');
    const paid = audit.filter((l) => l.action === 'card.pay' && l.subject_id === victim.cardId);
    expect(paid.map((l) => l.order_id)).to.deep.equal(small.slice(0, 3));
    for (const line of paid)
      expect(line).to.include({
        actor: 'shop-web',
        role: 'storefront',
        subject_id: victim.cardId,
        amount_minor: 2000,
      });
    const vouched = audit.filter(
      (l) => l.action === 'customer.vouch' && l.detail?.includes(victim.customerId),
    );
    expect(vouched.map((l) => l.order_id)).to.include.members([big.id, ...small]);
    expect(vouched.filter((l) => l.order_id === null).length).to.be.greaterThan(0);
  });

  it('a token whose credential was revoked since pays nothing (401)', async () => {
    const { customerId, cardId } = await customerWithCard();
    const other = await t.kit.store.operators.add({ name: 'shop-old', role: 'storefront', by: CLI });
    const order = await newOrder(customerId, '15.00');
    const res = await mint(customerId, order.id, other.token);
    expect(res.status, res.text).to.equal(201);
    await t.kit.store.operators.revoke('shop-old', CLI);
    const paid = await paySaved(res.body.data.customer_token, order.id, cardId);
    expect(paid.status, paid.text).to.equal(401);
    expect(paid.body.code).to.equal('CUSTOMER_TOKEN_INVALID');
    expect(gatewaySales(order.reference)).to.deep.equal([]);
  });

  it('minting is limited per credential (LIMIT_CUSTOMER_TOKENS_PER_CREDENTIAL): 429 with Retry-After, another credential unaffected', async () => {
    const limited = await t.kit.store.operators.add({ name: 'shop-busy', role: 'storefront', by: CLI });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof mint>> | null = null;
    for (let i = 0; i < 31; i++) {
      last = await mint(newCustomer(), undefined, limited.token);
      statuses.push(last.status);
    }
    expect(
      statuses.slice(0, 30).every((s) => s === 201),
      statuses.join(','),
    ).to.equal(true);
    expect(statuses[30]).to.equal(429);
    expect(last!.body.code).to.equal('RATE_LIMITED');
    expect(Number(last!.headers.get('retry-after'))).to.be.greaterThan(0);
    documented.check(last!, 'POST', '/customers/{id}/tokens');
    expect((await mint(newCustomer())).status).to.equal(201);
  });
});
