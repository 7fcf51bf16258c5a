import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { count, rows } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { OPS_TOKEN, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * Issue 43, part 1, through HTTP against a running kit: POST /orders honours `Idempotency-Key` (the
 * same key and body answer the same order, its client secret included, marked as a replay; another
 * body is a 409; requests at once make one order), a taken reference names the order holding it, and
 * GET /orders?reference= finds it.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const DAY = 24 * 3_600_000;
const CUSTOMER = { merchant_customer_id: 'cus-idem-ada', email: 'ada@example.com', last_name: 'Lovelace' };

// biome-ignore lint/suspicious/noExplicitAny: envelopes as the API answers them
type Answer = { status: number; headers: Headers; body: any; text: string };

describe('merchant: orders made once (issue 43, part 1)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  let storefront = '';
  let otherShop = '';
  let viewer = '';
  let n = 0;
  const ref = (what: string) => `idem-${what}-${process.pid}-${++n}`;

  before(async () => {
    t = await startTestKit({ env: { LIMIT_ORDERS_PER_ADDRESS: '1000/1m' } });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    storefront = (await t.kit.store.operators.add({ name: 'shop-web', role: 'storefront', by: CLI })).token;
    otherShop = (await t.kit.store.operators.add({ name: 'shop-app', role: 'storefront', by: CLI })).token;
    viewer = (await t.kit.store.operators.add({ name: 'vera', role: 'viewer', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  /** POST /orders with a key (null: none) and a token (null: anonymous); the answer checked against the document. */
  const post = async (
    body: unknown,
    key: string | null,
    token: string | null = storefront,
  ): Promise<Answer> => {
    const answer = await t.call('POST', '/orders', {
      body,
      ...(token === null ? {} : { token }),
      headers: key === null ? {} : { 'Idempotency-Key': key },
    });
    documented.check(answer, 'POST', '/orders');
    return answer;
  };
  const orderCount = () => count(t, 'orders');

  it('the same key and body again answer the same order and its client secret: 200, Idempotency-Replayed', async () => {
    const key = randomUUID();
    const reference = ref('replay');
    const body = { amount: '25.00', currency: 'EUR', reference, customer: CUSTOMER, description: 'two mugs' };
    const first = await post(body, key);
    expect(first.status, first.text).to.equal(201);
    expect(first.headers.get('idempotency-replayed')).to.equal(null);
    const made = await orderCount();

    // The same request, as a retry after a lost answer: written another way, it asks for the same order.
    const again = await post(
      { description: 'two mugs', customer: { ...CUSTOMER }, reference, currency: 'EUR', amount: 25 },
      key,
    );
    expect(again.status, again.text).to.equal(200);
    expect(again.headers.get('idempotency-replayed')).to.equal('true');
    expect(again.body.data.order.id).to.equal(first.body.data.order.id);
    expect(again.body.data.order.client_secret).to.equal(first.body.data.order.client_secret);
    expect(again.body.data.order).to.include({ reference, status: 'pending', amount: 2500 });
    expect(await orderCount(), 'nothing new made').to.equal(made);

    // The secret answered again opens the order's shopper routes.
    const shown = await t.call('GET', `/orders/${first.body.data.order.id}`, {
      secret: again.body.data.order.client_secret,
    });
    expect(shown.status, shown.text).to.equal(200);
  });

  it('a replay shows the order as it now stands: paid, still with its secret', async () => {
    const key = randomUUID();
    const body = { amount: '12.00', currency: 'EUR' };
    const first = await post(body, key);
    expect(first.status, first.text).to.equal(201);
    const id = first.body.data.order.id as string;
    const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card() } });
    expect(paid.status, paid.text).to.equal(200);
    const again = await post(body, key);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.order).to.include({ id, status: 'paid' });
    expect(again.body.data.order.client_secret).to.equal(first.body.data.order.client_secret);
  });

  it('the same key with another body is a 409 IDEMPOTENCY_KEY_REUSED, naming the order to the key’s credential', async () => {
    const key = randomUUID();
    const first = await post({ amount: '10.00', currency: 'EUR' }, key);
    expect(first.status, first.text).to.equal(201);
    const made = await orderCount();
    for (const other of [
      { amount: '10.01', currency: 'EUR' },
      { amount: '10.00', currency: 'GBP' },
      { amount: '10.00', currency: 'EUR', description: 'changed' },
      { amount: '10.00', currency: 'EUR', customer: CUSTOMER },
      { amount: '10.00', currency: 'EUR', reference: ref('other') },
    ]) {
      const reused = await post(other, key);
      expect(reused.status, `${JSON.stringify(other)}: ${reused.text}`).to.equal(409);
      expect(reused.body).to.include({ success: false, code: 'IDEMPOTENCY_KEY_REUSED' });
      expect(reused.body.data).to.deep.equal({ order_id: first.body.data.order.id });
      expect(reused.text, 'no secret in a refusal').to.not.contain(first.body.data.order.client_secret);
    }
    expect(await orderCount(), 'nothing made').to.equal(made);
    // The first request's body still answers the first order.
    expect((await post({ amount: '10.00', currency: 'EUR' }, key)).status).to.equal(200);
  });

  it('keys are each credential’s own; callers without one share theirs, and must use a long key', async () => {
    const key = randomUUID();
    const body = { amount: '7.00', currency: 'EUR' };
    const answers = [
      await post(body, key, storefront),
      await post(body, key, otherShop),
      await post(body, key, null),
      await post(body, key, viewer), // any good token has keys of its own
    ];
    expect(answers.map((a) => a.status)).to.deep.equal([201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.data.order.id)).size, 'four orders').to.equal(4);
    // Each again: its own order.
    const again = [
      await post(body, key, storefront),
      await post(body, key, otherShop),
      await post(body, key, null),
      await post(body, key, viewer),
    ];
    expect(again.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
    expect(again.map((a) => a.body.data.order.id)).to.deep.equal(answers.map((a) => a.body.data.order.id));

    // Among anonymous callers another body is refused without naming the order.
    const reused = await post({ amount: '8.00', currency: 'EUR' }, key, null);
    expect(reused.status, reused.text).to.equal(409);
    expect(reused.body).to.include({ code: 'IDEMPOTENCY_KEY_REUSED', data: null });

    const made = await orderCount();
    const short = await post(body, 'cart-1001', null);
    expect(short.status, short.text).to.equal(422);
    expect(short.body.errors['Idempotency-Key'][0]).to.contain('at least 16 characters');
    expect(
      (await post(body, 'cart-1001', storefront)).status,
      'a credential’s own key may be short',
    ).to.equal(201);
    const long = await post(body, 'k'.repeat(256), storefront);
    expect(long.status, long.text).to.equal(422);
    expect(long.body.errors).to.have.property('Idempotency-Key');
    const wrongToken = await post(body, key, 'kop_nobody-holds-this-token');
    expect(wrongToken.status, wrongToken.text).to.equal(401);
    expect(await orderCount()).to.equal(made + 1);
  });

  it('requests with one key at once make one order: one 201, every other a replay of it', async () => {
    const made = await orderCount();
    const key = randomUUID();
    const reference = ref('race');
    const body = { amount: '19.99', currency: 'EUR', reference };
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(body, key)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, answers.map((a) => a.text).join('\n')).to.deep.equal([...Array(11).fill(200), 201]);
    expect(new Set(answers.map((a) => a.body.data.order.id)).size).to.equal(1);
    expect(new Set(answers.map((a) => a.body.data.order.client_secret)).size).to.equal(1);
    expect(answers.filter((a) => a.headers.get('idempotency-replayed') === 'true')).to.have.length(11);
    expect(await orderCount()).to.equal(made + 1);
    expect(await count(t, 'order_requests', { order_id: answers[0]!.body.data.order.id })).to.equal(1);

    // Anonymous callers at once, without a reference: still one.
    const anonymousKey = randomUUID();
    const anonymous = await Promise.all(
      Array.from({ length: 8 }, () => post({ amount: '5.00', currency: 'EUR' }, anonymousKey, null)),
    );
    expect(anonymous.map((a) => a.status).sort()).to.deep.equal([...Array(7).fill(200), 201]);
    expect(new Set(anonymous.map((a) => a.body.data.order.id)).size).to.equal(1);
    expect(await orderCount()).to.equal(made + 2);
  });

  it('one reference under several keys at once: one order, the others a 409 naming it', async () => {
    const made = await orderCount();
    const reference = ref('ref-race');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post({ amount: '3.00', currency: 'EUR', reference }, randomUUID())),
    );
    const createdOne = answers.filter((a) => a.status === 201);
    expect(createdOne, answers.map((a) => a.text).join('\n')).to.have.length(1);
    const id = createdOne[0]!.body.data.order.id;
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused.status, refused.text).to.equal(409);
      expect(refused.body).to.include({ code: 'DUPLICATE_REFERENCE' });
      expect(refused.body.data).to.deep.equal({ order_id: id });
    }
    expect(await orderCount()).to.equal(made + 1);
    // The refused keys were not kept: the same request again is refused again, not answered an order.
    expect(await count(t, 'order_requests', { order_id: id })).to.equal(1);
  });

  it('a taken reference is a 409 naming the order that holds it; GET /orders?reference= finds it', async () => {
    const reference = ref('taken');
    const first = await post({ amount: '5.00', currency: 'EUR', reference }, null);
    expect(first.status, first.text).to.equal(201);
    const id = first.body.data.order.id;
    const made = await orderCount();
    for (const token of [storefront, OPS_TOKEN]) {
      const taken = await post({ amount: '6.00', currency: 'EUR', reference }, null, token);
      expect(taken.status, taken.text).to.equal(409);
      expect(taken.body).to.include({ code: 'DUPLICATE_REFERENCE' });
      expect(taken.body.data).to.deep.equal({ order_id: id });
      expect(taken.body.message).to.contain(id);
      expect(taken.body.errors.reference[0]).to.contain(id);
    }
    expect(await orderCount()).to.equal(made);

    const found = await t.call('GET', `/orders?reference=${encodeURIComponent(reference)}`, {
      token: viewer,
    });
    expect(found.status, found.text).to.equal(200);
    documented.check(found, 'GET', '/orders');
    expect(found.body.data.orders.map((o: { id: string }) => o.id)).to.deep.equal([id]);
    expect(found.body.data.next_cursor).to.equal(null);
    const none = await t.call('GET', `/orders?reference=${ref('never')}`, { token: viewer });
    expect(none.body.data.orders).to.deep.equal([]);
    // The list is the readers' (every role but storefront), as it was.
    const shop = await t.call('GET', `/orders?reference=${reference}`, { token: storefront });
    expect(shop.status, shop.text).to.equal(403);
    const bad = await t.call('GET', '/orders?reference=has%20space', { token: viewer });
    expect(bad.status, bad.text).to.equal(422);
    expect(bad.body.errors).to.have.property('reference');
  });

  it('keeps the key and the request only as digests, and the client secret sealed', async () => {
    const key = `4242 4242 4242 4242 ${randomUUID()}`;
    const first = await post({ amount: '4.00', currency: 'EUR' }, key);
    expect(first.status, first.text).to.equal(201);
    const [kept] = await rows(t, 'order_requests', { order_id: first.body.data.order.id });
    expect(kept).to.include({ scope: (await t.kit.store.operators.byToken(storefront))!.id });
    expect(kept!.key_digest).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(kept!.client_secret_sealed).to.match(/^v1\./);
    const dump = await t.dump();
    expect(dump).to.not.contain(first.body.data.order.client_secret);
    expect(dump).to.not.contain(key);
    expect(dump).to.not.contain('4242424242424242');
  });

  it('a key is kept 24 hours: then it makes a new order, and the job deletes what expired', async () => {
    const key = randomUUID();
    const body = { amount: '9.00', currency: 'EUR' };
    const first = await post(body, key);
    expect(first.status, first.text).to.equal(201);
    t.sandboxClock.advance(DAY - 60_000);
    expect((await post(body, key)).status, 'a minute before its day ends').to.equal(200);
    const other = await post({ amount: '9.50', currency: 'EUR' }, randomUUID());
    expect(other.status).to.equal(201);
    t.sandboxClock.advance(2 * 60_000);

    const after = await post(body, key);
    expect(after.status, after.text).to.equal(201);
    expect(after.body.data.order.id).to.not.equal(first.body.data.order.id);
    expect(await count(t, 'order_requests', { order_id: first.body.data.order.id }), 'replaced').to.equal(0);

    // Everything made before the day began has expired; the two made since have not.
    const before = await count(t, 'order_requests');
    const purged = await t.kit.jobs.run('idempotency-keys');
    expect(purged).to.equal(before - 2);
    expect(await count(t, 'order_requests')).to.equal(2);
    expect((await post(body, key)).status, 'the new key lives on').to.equal(200);
  });
});
