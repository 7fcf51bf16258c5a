import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { card } from '../../support/gateway.js';
import { startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Issue 41, part 3, through HTTP: `GET /customers/{id}/cards` asked the gateway (1 to 10 calls) on
 * every call and had no limit, so any signed-in shopper could spend checkout's share of the key's
 * budget. Now it is limited per client address and per customer, and answered from the kit's own
 * rows within SAVED_CARDS_SYNC_WINDOW_MS (30 s) of a gateway list, with `synced_at` saying as of when.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const WINDOW_MS = 30_000;

describe('merchant: a customer’s saved-card list, limited and served from the kit’s rows (issue 41, part 3)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  let storefront = '';
  let viewer = '';
  /** The gateway's list calls the kit made, and whether it answers them. */
  let gatewayLists = 0;
  let gatewayDown = false;

  before(async () => {
    t = await startTestKit({
      env: {
        // Each test speaks from addresses of its own: the per-address counts do not mix.
        TRUST_PROXY: '1',
        LIMIT_CARD_LISTS_PER_CUSTOMER: '4/1m',
        LIMIT_CARD_LISTS_PER_ADDRESS: '6/1m',
      },
      clientDeps: {
        fetch: async (input, init) => {
          if (String(input).includes('/api/v1/payment-instruments?')) {
            gatewayLists += 1;
            if (gatewayDown)
              throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
          }
          return fetch(input, init);
        },
      },
    });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    storefront = (await t.kit.store.operators.add({ name: 'shop-web', role: 'storefront', by: CLI })).token;
    viewer = (await t.kit.store.operators.add({ name: 'vera', role: 'viewer', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  let customers = 0;
  let addresses = 0;
  /** A client address no other request of this file used. */
  const newAddress = () => ({ 'X-Forwarded-For': `198.51.100.${++addresses}` });
  /** A customer, their token, and a card saved by a paid order (which lists nothing). */
  const customerWithCard = async () => {
    const customerId = `cus-lists-${process.pid}-${++customers}`;
    const vouched = await t.call('POST', `/customers/${customerId}/tokens`, { token: storefront });
    expect(vouched.status, vouched.text).to.equal(201);
    const token = vouched.body.data.customer_token as string;
    const created = await t.call('POST', '/orders', {
      body: { amount: '10.00', currency: 'EUR', customer: { merchant_customer_id: customerId } },
    });
    const paid = await t.call('POST', `/orders/${created.body.data.order.id}/pay/card`, {
      body: { card: card(), save_card: true },
      headers: { 'customer-token': token },
    });
    expect(paid.status, paid.text).to.equal(200);
    return { customerId, token };
  };
  const list = (customerId: string, headers: Record<string, string>, o: { token?: string } = {}) =>
    t.call('GET', `/customers/${customerId}/cards`, { headers, ...o });

  it('within 30 s of a gateway list the kit answers from its own rows, with synced_at; after it, asks again', async () => {
    const { customerId, token } = await customerWithCard();
    const from = { ...newAddress(), 'customer-token': token };
    const before = gatewayLists;
    const first = await list(customerId, from);
    expect(first.status, first.text).to.equal(200);
    documented.check(first, 'GET', '/customers/{id}/cards');
    expect(gatewayLists, 'the first list asks the gateway').to.equal(before + 1);
    expect(first.body.data).to.include({ synced: true, customer_id: customerId });
    expect(first.body.data.cards).to.have.length(1);
    const syncedAt = first.body.data.synced_at as string;
    expect(Date.parse(syncedAt)).to.be.closeTo(t.clock.now(), 5_000);

    // A shopper reloading the page: the kit's rows, as of that list; the gateway is not asked.
    t.sandboxClock.advance(WINDOW_MS - 1_000);
    const again = await list(customerId, from);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data).to.deep.equal(first.body.data);
    expect(gatewayLists, 'within the window: no gateway call').to.equal(before + 1);
    // An operator's read is served alike.
    const operators = await list(customerId, newAddress(), { token: viewer });
    expect(operators.body.data.synced_at).to.equal(syncedAt);
    expect(gatewayLists).to.equal(before + 1);

    t.sandboxClock.advance(2_000);
    const later = await list(customerId, from);
    expect(later.status, later.text).to.equal(200);
    expect(gatewayLists, 'past the window the gateway is asked again').to.equal(before + 2);
    expect(Date.parse(later.body.data.synced_at)).to.be.above(Date.parse(syncedAt));
    expect(await t.kit.store.savedCards.syncedAt(customerId)).to.deep.equal(
      new Date(later.body.data.synced_at),
    );
  });

  it("the kit's own changes show within the window: a card removed is gone from the next list", async () => {
    const { customerId, token } = await customerWithCard();
    const from = { ...newAddress(), 'customer-token': token };
    const [shown] = (await list(customerId, from)).body.data.cards;
    const removed = await t.call('DELETE', `/customers/${customerId}/cards/${shown.id}`, { headers: from });
    expect(removed.status, removed.text).to.equal(200);
    const before = gatewayLists;
    const listed = await list(customerId, from);
    expect(listed.body.data.cards).to.deep.equal([]);
    expect(gatewayLists).to.equal(before);
  });

  it('per customer: past LIMIT_CARD_LISTS_PER_CUSTOMER a 429 card_lists_per_customer, from any address; a stranger spends none of it', async () => {
    const { customerId, token } = await customerWithCard();
    const other = await customerWithCard();
    // Without the customer's token: 401, and nothing of the customer's count spent.
    for (let i = 0; i < 6; i++) {
      const refused = await list(customerId, newAddress());
      expect(refused.status, refused.text).to.equal(401);
    }
    for (let i = 0; i < 4; i++) {
      const res = await list(customerId, { ...newAddress(), 'customer-token': token });
      expect(res.status, res.text).to.equal(200);
    }
    const limited = await list(customerId, { ...newAddress(), 'customer-token': token });
    expect(limited.status, limited.text).to.equal(429);
    expect(limited.body).to.include({ success: false, code: 'RATE_LIMITED' });
    expect(limited.body.data.limit).to.equal('card_lists_per_customer');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    documented.check(limited, 'GET', '/customers/{id}/cards');
    // An operator asking for the same customer counts toward it too; another customer does not.
    expect((await list(customerId, newAddress(), { token: viewer })).status).to.equal(429);
    const theirs = await list(other.customerId, { ...newAddress(), 'customer-token': other.token });
    expect(theirs.status, theirs.text).to.equal(200);
    // Redis counts the customer under a digest of the id, never the id itself.
    const keys = await t.kit.redis.keys(`${t.redisPrefix}:limit:card_lists_per_customer:*`);
    expect(keys.length).to.be.at.least(2);
    for (const key of keys) expect(key).to.not.contain('cus-lists');
  });

  it('per address: past LIMIT_CARD_LISTS_PER_ADDRESS a 429 card_lists_per_address, whatever the customer, before the token is read', async () => {
    const address = newAddress();
    const owners = await Promise.all([customerWithCard(), customerWithCard(), customerWithCard()]);
    for (let i = 0; i < 6; i++) {
      const { customerId, token } = owners[i % owners.length]!;
      const res = await list(customerId, { ...address, 'customer-token': token });
      expect(res.status, res.text).to.equal(200);
    }
    const before = gatewayLists;
    for (const headers of [{ ...address, 'customer-token': owners[0]!.token }, address]) {
      const limited = await list(owners[0]!.customerId, headers);
      expect(limited.status, limited.text).to.equal(429);
      expect(limited.body.data.limit).to.equal('card_lists_per_address');
    }
    expect(gatewayLists, 'a refused list asks nothing').to.equal(before);
    // Another address lists the same customer's cards.
    const elsewhere = await list(owners[0]!.customerId, {
      ...newAddress(),
      'customer-token': owners[0]!.token,
    });
    expect(elsewhere.status, elsewhere.text).to.equal(200);
  });

  it("a gateway that does not answer: the kit's rows, synced false, synced_at its last list", async () => {
    const { customerId, token } = await customerWithCard();
    const from = { ...newAddress(), 'customer-token': token };
    const first = await list(customerId, from);
    const syncedAt = first.body.data.synced_at as string;
    t.sandboxClock.advance(WINDOW_MS + 1_000);
    gatewayDown = true;
    try {
      const listed = await list(customerId, from);
      expect(listed.status, listed.text).to.equal(200);
      documented.check(listed, 'GET', '/customers/{id}/cards');
      expect(listed.body.data).to.include({ synced: false, synced_at: syncedAt });
      expect(listed.body.data.cards).to.have.length(1);
      // A customer the kit never had a list of: null.
      const fresh = `cus-lists-never-${process.pid}`;
      const vouched = await t.call('POST', `/customers/${fresh}/tokens`, { token: storefront });
      const never = await list(fresh, {
        ...newAddress(),
        'customer-token': vouched.body.data.customer_token,
      });
      expect(never.body.data).to.deep.include({ synced: false, synced_at: null, cards: [] });
    } finally {
      gatewayDown = false;
    }
  });
});
