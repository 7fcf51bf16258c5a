import { expect } from 'chai';
import { count } from '../../support/db.js';
import { deliveriesOff, paidOrder, refundAtGateway } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { waitFor } from '../../support/process.js';
import { expectNothingAppliedTwice, expectOrdersTrue } from '../../support/truth.js';

/**
 * merchant.md, Background work: 2,000 open orders polled within the budget shared by every caller of
 * the key (400 background calls a minute, the key kept under the gateway's 500-a-minute slowdown),
 * with checkout calls never held back. Time is the kit's and the sandbox's one clock: the budget's
 * waits move it on (the test kit's client sleeps on it), so five minutes of polling take seconds.
 */

const ORDERS = 2000;
const MINUTE = 60_000;

interface Call {
  at: number;
  path: string;
  status: number;
  remaining: number | null;
}

/** The most calls in any 60 s window, and where it starts. */
function busiestWindow(times: number[]): { count: number; from: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let best = { count: 0, from: sorted[0] ?? 0 };
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= MINUTE) i++;
    if (j - i + 1 > best.count) best = { count: j - i + 1, from: sorted[i]! };
  }
  return best;
}

/** The public routes' limits off: these tests pay thousands of orders from one address at once. */
const LIMITS_OFF = { LIMIT_ORDERS_PER_ADDRESS: 'off', LIMIT_PAY_PER_ADDRESS: 'off' };

async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

describe('merchant: 2,000 open orders polled within the shared budget, checkout never held back', function () {
  this.timeout(300_000);
  let t: TestKit;
  const calls: Call[] = [];
  /** The gateway ids of the 2,000 auths. */
  const seeded = new Set<string>();

  before(async () => {
    let clock: { now(): number } = { now: () => Date.now() };
    t = await startTestKit({
      // 200 orders and payments a minute of the sandbox's clock from one address, seconds apart in
      // real time: the per-address limits (which count real time) would refuse them, and are not
      // what this measures.
      env: LIMITS_OFF,
      clientDeps: {
        // Every call the kit makes, with the gateway's answer: what the budget let through, and when.
        fetch: async (input, init) => {
          const at = clock.now();
          const response = await fetch(input, init);
          const header = response.headers.get('X-RateLimit-Remaining');
          calls.push({
            at,
            path: new URL(String(input)).pathname,
            status: response.status,
            remaining: header === null ? null : Number(header),
          });
          return response;
        },
      },
    });
    clock = t.clock;
    // 2,000 card auths through the kit: 200 a minute (400 gateway calls), under the slowdown too.
    const ids = Array.from({ length: ORDERS }, (_, i) => i);
    for (let batch = 0; batch < ORDERS; batch += 200) {
      await inParallel(ids.slice(batch, batch + 200), 8, async () => {
        const created = await t.call('POST', '/orders', { body: { amount: '10.00', currency: 'EUR' } });
        const paid = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, {
          body: { card: card(), mode: 'auth' },
        });
        expect(paid.body.data.order.status, paid.text).to.equal('authorized');
        seeded.add((await getOrder(t, created.body.data.order.id)).payment.gateway_transaction_id);
      });
      t.sandboxClock.advance(MINUTE);
    }
    calls.length = 0; // from here on: the poller, and checkout beside it
  });
  after(async () => {
    await t?.close();
  });

  it('every order is asked about, never more than the budget a minute, and checkout goes at once', async () => {
    t.sandboxClock.advance(2 * MINUTE); // the first poll of the first orders is due
    const polled = new Set<string>();
    const statusPath = /^\/api\/v1\/transactions\/(\d+)\/status$/;
    const startedAt = t.clock.now();
    let polling = true;
    const poller = (async () => {
      try {
        while ([...seeded].some((id) => !polled.has(id))) {
          await t.kit.jobs.poll();
          for (const c of calls) {
            const m = statusPath.exec(c.path);
            if (m) polled.add(m[1]!);
          }
        }
      } finally {
        polling = false;
      }
    })();
    // Checkout beside the poller, at a shop's pace: a card sale every 5 s of the shared clock.
    let sales = 0;
    let nextSaleAt = t.clock.now();
    while (polling) {
      if (t.clock.now() < nextSaleAt) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      nextSaleAt = t.clock.now() + 5_000;
      const created = await t.call('POST', '/orders', { body: { amount: '5.00', currency: 'EUR' } });
      const sale = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, {
        body: { card: card(), mode: 'sale' },
      });
      expect(sale.status, sale.text).to.equal(200);
      sales += 1;
    }
    await poller;
    const minutes = Math.ceil((t.clock.now() - startedAt) / MINUTE) + 1;

    expect(seeded.size).to.equal(ORDERS);
    expect([...seeded].filter((id) => !polled.has(id))).to.deep.equal([]);
    expect(sales, 'checkout ran beside the poller').to.be.greaterThan(10);
    // The gateway never slowed the key down nor refused it.
    expect(calls.every((c) => c.status !== 429)).to.equal(true);
    const lowest = Math.min(...calls.map((c) => c.remaining ?? 1000));
    expect(lowest, 'X-RateLimit-Remaining: the gateway counted fewer than 500').to.be.greaterThan(500);
    // No 60 s window saw more than 400 background calls, nor 500 calls in all.
    const polls = calls.filter((c) => statusPath.test(c.path)).map((c) => c.at);
    const busiest = busiestWindow(calls.map((c) => c.at));
    expect(busiestWindow(polls).count).to.be.at.most(400);
    expect(busiest.count).to.be.below(500);
    // The budget's own account: the poller waited its turn, checkout was never told to wait.
    const spent = await t.kit.budget.spending(minutes + 1);
    expect(spent.some((row) => (row.waited.poller ?? 0) > 0)).to.equal(true);
    expect(spent.every((row) => row.waited.checkout === undefined)).to.equal(true);
    expect(spent.reduce((n, row) => n + (row.byCaller.poller ?? 0), 0)).to.be.at.least(ORDERS);
    console.log(
      `      2,000 orders: ${polls.length} status polls and ${sales} checkout sales in ${((t.clock.now() - startedAt) / MINUTE).toFixed(1)} minutes of the shared clock; ` +
        `busiest 60 s: ${busiest.count} calls (${busiestWindow(polls).count} polls); lowest X-RateLimit-Remaining ${lowest}`,
    );
    await expectOrdersTrue(t);
    await expectNothingAppliedTwice(t);
  });
});

describe('merchant: recovery at the budget', function () {
  this.timeout(300_000);
  let t: TestKit;
  const SALES = 200;

  before(async () => {
    t = await startTestKit({ env: LIMITS_OFF });
    await deliveriesOff(t);
    // 200 card sales through the kit, each partly refunded at the gateway: 400 events nobody received.
    const ids = Array.from({ length: SALES }, (_, i) => i);
    for (let batch = 0; batch < SALES; batch += 100) {
      await inParallel(ids.slice(batch, batch + 100), 8, async () => {
        const { sale } = await paidOrder(t, '10.00');
        await refundAtGateway(t, sale.id, 1);
      });
      t.sandboxClock.advance(MINUTE);
    }
    t.sandboxClock.advance(MINUTE);
  });
  after(async () => {
    await t?.close();
  });

  it('one call per missed event and one per 100 listed, at the pace of the budget', async () => {
    const startedAt = t.clock.now();
    const s = await t.kit.jobs.recover();
    const minutes = (t.clock.now() - startedAt) / MINUTE;
    expect(s.missing).to.equal(2 * SALES);
    expect(s.recovered).to.equal(s.missing);
    expect(s.gatewayCalls).to.equal(s.missing + Math.ceil(s.listed / 100));
    const perEvent = s.gatewayCalls / s.recovered;
    // At 400 a minute after a first burst: the time is the calls' pace, whatever the count.
    expect(minutes).to.be.within((s.gatewayCalls - 70) / 400, s.gatewayCalls / 400 + 0.2);
    console.log(
      `      recovery: ${s.recovered} events in ${s.gatewayCalls} calls (${perEvent.toFixed(3)} a recovered event), ` +
        `${minutes.toFixed(2)} minutes of the shared clock; 10,000 missed events: ${10_000 + 100} calls, ` +
        `${((10_000 + 100) / 400).toFixed(1)} minutes at 400 a minute`,
    );
    await waitFor(
      'every inbox row processed',
      async () => (await count(t, 'webhook_inbox', { processed_at: null })) === 0,
      30_000,
    );
    await expectOrdersTrue(t);
    await expectNothingAppliedTwice(t);
  });
});
