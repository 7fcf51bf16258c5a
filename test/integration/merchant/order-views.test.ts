import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { card } from '../../support/gateway.js';
import { OPS_TOKEN, pressButton, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * GET /orders/{id} answers whoever holds the order's client secret (the test kit sends it, as a
 * storefront does), so without a token it shows where the order stands and nothing of who pays or what
 * operators know; an operator's token that may read shows everything. The payment answers, which the
 * secret's holder may ask for too, show the same public view.
 */
const PUBLIC_KEYS = [
  'amount',
  'amount_formatted',
  'captured_amount',
  'captured_amount_formatted',
  // Why the order ended, once it did (issue 43): the shop tells an expired order from a cancelled one.
  'closed_reason',
  'currency',
  'disputed_amount',
  'disputed_amount_formatted',
  'id',
  'next_action',
  'reference',
  'refunded_amount',
  'refunded_amount_formatted',
  'status',
  'updated_at',
];
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const CUSTOMER = {
  merchant_customer_id: 'cus-ada',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
};

describe('merchant: the public order view and the operator view', function () {
  this.timeout(60_000);
  let t: TestKit;
  let viewer: string;
  let storefront: string;

  before(async () => {
    t = await startTestKit();
    viewer = (await t.kit.store.operators.add({ name: 'vera', role: 'viewer', by: CLI })).token;
    storefront = (await t.kit.store.operators.add({ name: 'shop-web', role: 'storefront', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  const newOrder = async () => {
    const created = await t.call('POST', '/orders', {
      body: { amount: '25.00', currency: 'EUR', description: 'A first edition', customer: CUSTOMER },
    });
    expect(created.status, created.text).to.equal(201);
    // The creator just sent these: its answer keeps them.
    expect(created.body.data.order).to.include({ description: 'A first edition' });
    expect(created.body.data.order.customer).to.deep.equal(CUSTOMER);
    return created.body.data.order.id as string;
  };
  const read = (id: string, o: { ops?: boolean; token?: string; headers?: Record<string, string> } = {}) =>
    t.call('GET', `/orders/${id}`, o);
  const keysOf = (order: object) => Object.keys(order).sort();

  it('a 3DS challenge: the public view has the allowed fields only and the challenge page, until it is done', async () => {
    const id = await newOrder();
    const pay = await t.call('POST', `/orders/${id}/pay/card`, {
      body: { card: card('4000000000003220'), mode: 'sale', customer: CUSTOMER },
    });
    expect(pay.status, pay.text).to.equal(200);
    const url = pay.body.data.next_action.url as string;
    expect(url).to.match(/^http/);
    // The payment's answer is public too: whoever holds the secret may pay.
    expect(keysOf(pay.body.data.order)).to.deep.equal(PUBLIC_KEYS);
    expect(pay.text).to.not.contain('ada@example.com');
    expect(pay.body.data.order.next_action).to.deep.equal({ type: 'redirect', url });

    const waiting = await read(id);
    expect(waiting.status, waiting.text).to.equal(200);
    expect(waiting.headers.get('vary')).to.equal('Authorization, Order-Secret');
    expect(waiting.headers.get('cache-control')).to.equal('no-store');
    const shown = waiting.body.data.order;
    expect(keysOf(shown)).to.deep.equal(PUBLIC_KEYS);
    expect(shown).to.include({ id, status: 'requires_action', amount: 2500, amount_formatted: '25.00' });
    expect(shown.next_action).to.deep.equal({ type: 'redirect', url });
    for (const secret of ['ada@example.com', 'Lovelace', 'A first edition', 'cus-ada'])
      expect(waiting.text).to.not.contain(secret);

    const back = await pressButton(url, 'authenticate');
    expect((await fetch(back)).status).to.equal(200);
    const paid = await read(id);
    expect(keysOf(paid.body.data.order)).to.deep.equal(PUBLIC_KEYS);
    expect(paid.body.data.order).to.include({ status: 'paid', captured_amount: 2500, next_action: null });

    // An operator who may read: everything, with the history and the disputes.
    for (const who of [{ ops: true }, { token: viewer }]) {
      const full = await read(id, who);
      expect(full.status, full.text).to.equal(200);
      expect(full.headers.get('vary')).to.equal('Authorization, Order-Secret');
      expect(full.headers.get('cache-control')).to.equal('no-store');
      const order = full.body.data.order;
      expect(order.customer).to.deep.equal(CUSTOMER);
      expect(order).to.include({ description: 'A first edition', needs_review: false, status: 'paid' });
      expect(order.payment.gateway_transaction_id).to.be.a('string');
      expect(order.disputes).to.deep.equal([]);
      const statuses = order.history.map((h: { status_after: string }) => h.status_after);
      expect(statuses).to.include.members(['requires_action', 'paid']);
    }
  });

  it("a token that is sent must be a reader's: 403 for the storefront role, 401 for a wrong one", async () => {
    const id = await newOrder();
    const forbidden = await read(id, { token: storefront });
    expect(forbidden.status, forbidden.text).to.equal(403);
    expect(forbidden.body.code).to.equal('FORBIDDEN');
    expect(forbidden.body.data.role).to.equal('storefront');
    expect(forbidden.headers.get('vary')).to.equal('Authorization, Order-Secret');
    for (const headers of [
      { authorization: `Bearer ${OPS_TOKEN}x` },
      { authorization: 'Bearer kop_nobody' },
      { authorization: `Basic ${Buffer.from(`x:${OPS_TOKEN}`).toString('base64')}` },
    ]) {
      const refused = await read(id, { headers });
      expect(refused.status, `${headers.authorization}: ${refused.text}`).to.equal(401);
      expect(refused.body.code).to.equal('UNAUTHORIZED');
      expect(refused.text).to.not.contain('ada@example.com');
    }
  });

  it('a redirect session: next_action is its hosted page; a decline answers the public view', async () => {
    const id = await newOrder();
    const session = await t.call('POST', `/orders/${id}/pay/redirect`, {
      body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
    });
    expect(session.status, session.text).to.equal(200);
    const url = session.body.data.next_action.url as string;
    expect(keysOf(session.body.data.order)).to.deep.equal(PUBLIC_KEYS);
    expect((await read(id)).body.data.order.next_action).to.deep.equal({ type: 'redirect', url });

    const declined = await newOrder();
    const decline = await t.call('POST', `/orders/${declined}/pay/card`, {
      body: { card: card('4000000000000002'), mode: 'sale' },
    });
    expect(decline.status, decline.text).to.equal(402);
    expect(decline.body.code).to.equal('ERR_CARD_DO_NOT_HONOR');
    expect(keysOf(decline.body.data.order)).to.deep.equal(PUBLIC_KEYS);
    expect(decline.body.data.order).to.include({ status: 'failed', next_action: null });
    expect(decline.text).to.not.contain('ada@example.com');
    // The operator still reads why it failed.
    expect((await read(declined, { ops: true })).body.data.order.failure_code).to.equal(
      'ERR_CARD_DO_NOT_HONOR',
    );
  });
});
