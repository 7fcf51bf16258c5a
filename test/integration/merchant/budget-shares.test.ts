import { expect } from 'chai';
import { getOrder, startTestKit, storeOrder, type TestKit } from '../../support/kit.js';

/**
 * Checkout now goes through the key's budget (docs/orders.md, One budget for the API key), through HTTP: a
 * checkout burst past its share is answered 503 GATEWAY_BUSY with Retry-After, nothing sent and
 * the attempt not counted against the order, while the poller still gets its reserved share. Small
 * numbers, so that a few payments fill a minute: 20 calls a minute in all, background at most 10
 * and 4 of them kept for it, so checkout traffic has 16.
 */
const CARD = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' };

describe('merchant: the budget’s shares through HTTP (checkout burst beside the poller)', () => {
  let t: TestKit;
  before(async () => {
    t = await startTestKit({
      env: {
        ROLES: 'api',
        GATEWAY_KEY_PER_MINUTE: '20',
        GATEWAY_BACKGROUND_PER_MINUTE: '10',
        GATEWAY_BACKGROUND_RESERVED_PER_MINUTE: '4',
        LIMIT_PAY_PER_ADDRESS: 'off',
        LIMIT_ORDERS_PER_ADDRESS: 'off',
      },
    });
  });
  after(async () => {
    await t?.close();
  });

  /** Admitted calls by caller, and waits, over the last two minutes. */
  async function spent() {
    const calls: Record<string, number> = {};
    const waited: Record<string, number> = {};
    for (const row of await t.kit.budget.spending(2)) {
      for (const [c, n] of Object.entries(row.byCaller)) calls[c] = (calls[c] ?? 0) + n;
      for (const [c, n] of Object.entries(row.waited)) waited[c] = (waited[c] ?? 0) + n;
    }
    return { calls, waited };
  }

  it('a burst of card sales past checkout’s share: 503 GATEWAY_BUSY with Retry-After, and the poller still polls its share', async () => {
    // Four paid orders for the poller to ask about, made due now.
    const polled = [];
    for (let i = 0; i < 4; i++) {
      const order = await storeOrder(t, { amountMinor: 100 + i, currency: 'EUR' });
      const res = await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: CARD } });
      expect(res.status, res.text).to.equal(200);
      polled.push(order.id);
    }
    await t.kit.sequelize.query('UPDATE orders SET next_poll_at = ? WHERE id IN (?)', {
      replacements: [new Date(t.clock.now() - 1000), polled],
    });
    // Checkout traffic so far: 8 calls of checkout (3DS and the transaction, per sale) and the
    // operator's webhook registration at start-up. Each sale from now on takes 2 of what is left.
    const { calls } = await spent();
    const foreground = (calls.checkout ?? 0) + (calls.operator ?? 0) + (calls.landing ?? 0);
    const sales = Math.floor((16 - foreground) / 2);
    expect(sales).to.be.within(2, 4);
    const orders = await Promise.all(
      Array.from({ length: 8 }, (_, i) => storeOrder(t, { amountMinor: 200 + i, currency: 'EUR' })),
    );
    const answers = [];
    for (const order of orders)
      answers.push(await t.call('POST', `/orders/${order.id}/pay/card`, { body: { card: CARD } }));
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 200),
      statuses.join(','),
    ).to.have.length(sales);
    const busy = answers.filter((a) => a.status === 503);
    expect(busy, statuses.join(',')).to.have.length(8 - sales);
    for (const [i, answer] of answers.entries()) {
      if (answer.status !== 503) continue;
      expect(answer.body.code).to.equal('GATEWAY_BUSY');
      expect(answer.body.message).to.match(/nothing was charged/);
      const after = Number(answer.headers.get('retry-after'));
      expect(after, 'until the first call of the minute leaves it').to.be.within(1, 60);
      expect(answer.body.data.order.status).to.equal('failed');
      // Why it failed is the operator's to read (the answer is the order's public view).
      expect((await getOrder(t, orders[i]!.id)).failure_code).to.equal('GATEWAY_BUSY');
    }
    const spentCheckout = (await spent()).calls.checkout;
    // What is left of the share after the last sale: at most one 3DS call of a sale held at its transaction.
    expect(spentCheckout! + (calls.operator ?? 0) + (calls.landing ?? 0)).to.be.within(15, 16);

    // The poller, during the burst: its reserved 4 go; checkout's spent share takes none of them.
    const report = await t.kit.jobs.poll();
    expect(report, JSON.stringify(report)).to.deep.include({ orders: 4, failed: 0, gatewayCalls: 4 });
    const after = await spent();
    expect(after.calls.poller).to.equal(4);
    expect(after.calls.checkout, 'checkout never went past its share').to.equal(spentCheckout);

    // A busy answer is not the payer's failure: the same order pays once the minute has room.
    t.sandboxClock.advance(61_000);
    const again = await t.call('POST', `/orders/${busy[0]!.body.data.order.id}/pay/card`, {
      body: { card: CARD },
    });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.order.status).to.equal('paid');
  });
});
