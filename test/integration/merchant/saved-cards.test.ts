import { expect } from 'chai';
import { chargeReference } from '../../../src/merchant/checkout/saved.js';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { row, rows } from '../../support/db.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import {
  getOrder,
  landingStatus,
  pressButton,
  startTestKit,
  storeOrder,
  type TestKit,
} from '../../support/kit.js';

/**
 * Issue 21, through the kit's HTTP API against the embedded sandbox: a returning customer pays with a
 * saved card. Saving needs the customer's consent (`save_card`) and their token; paying with one
 * needs the order to be theirs; an operator charges one for a new order under a stored key. The
 * vault token never leaves the kit, and another customer's card is no card at all (404).
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const CHALLENGE = '4000000000003220';
/** Approved once and saved; every later payment with its token is declined (sandbox.md section 4). */
const DECLINES_LATER = '4000000000000341';
const MASTERCARD = '5555555555554444';

describe('merchant: saved cards (issue 21)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  let storefront = '';
  let viewer = '';
  let operator = '';
  let refuseTransactions = false;
  /** Runs once the gateway has answered a list of instruments, before the kit reads the answer. */
  let whileListed: (() => Promise<void>) | null = null;
  let hookFailed: unknown = null;

  before(async () => {
    // A gateway that refuses connections to POST /transactions while `refuseTransactions` is set.
    t = await startTestKit({
      clientDeps: {
        fetch: async (input, init) => {
          if (refuseTransactions && String(input).endsWith('/api/v1/transactions'))
            throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
          const answer = await fetch(input, init);
          if (whileListed && String(input).includes('/api/v1/payment-instruments?')) {
            const hook = whileListed;
            whileListed = null;
            // A hook that fails fails its test (hookFailed), not the kit's call.
            await hook().catch((error: unknown) => (hookFailed = error));
          }
          return answer;
        },
      },
    });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    storefront = (await t.kit.store.operators.add({ name: 'shop-web', role: 'storefront', by: CLI })).token;
    viewer = (await t.kit.store.operators.add({ name: 'vera', role: 'viewer', by: CLI })).token;
    operator = (await t.kit.store.operators.add({ name: 'olga', role: 'operator', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  let customers = 0;
  const newCustomer = () => `cus-${process.pid}-${++customers}`;
  /** The token the shop's server gets for the customer it signed in. */
  const tokenFor = async (customerId: string, orderId?: string) => {
    const res = await t.call('POST', `/customers/${customerId}/tokens`, {
      token: storefront,
      ...(orderId ? { body: { order_id: orderId } } : {}),
    });
    expect(res.status, res.text).to.equal(201);
    documented.check(res, 'POST', '/customers/{id}/tokens');
    return res.body.data.customer_token as string;
  };
  // biome-ignore lint/suspicious/noExplicitAny: request bodies of every shape
  const as = (customerToken: string | null, method: string, path: string, body?: any) =>
    t.call(method, path, { body, headers: customerToken ? { 'customer-token': customerToken } : {} });
  const newOrder = async (customerId: string | null, amount = '25.00') => {
    const res = await t.call('POST', '/orders', {
      body: {
        amount,
        currency: 'EUR',
        ...(customerId ? { customer: { merchant_customer_id: customerId, email: 'ada@example.com' } } : {}),
      },
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.data.order as { id: string; reference: string };
  };
  /** A customer, their token, and a card saved by a paid order. */
  const saved = async (number = '4242424242424242', expiry?: { exp_month: number; exp_year: number }) => {
    const customerId = newCustomer();
    const token = await tokenFor(customerId);
    const order = await newOrder(customerId);
    const paid = await as(token, 'POST', `/orders/${order.id}/pay/card`, {
      card: card(number, expiry),
      mode: 'sale',
      save_card: true,
    });
    expect(paid.status, paid.text).to.equal(200);
    if (paid.body.data.next_action) {
      const back = await pressButton(paid.body.data.next_action.url, 'authenticate');
      expect(landingStatus(await (await fetch(back)).text())).to.equal('paid');
    } else expect(paid.body.data.order.status).to.equal('paid');
    const cards = await as(token, 'GET', `/customers/${customerId}/cards`);
    expect(cards.status, cards.text).to.equal(200);
    expect(cards.body.data.cards).to.have.length(1);
    return { customerId, token, cardId: cards.body.data.cards[0].id as string, order };
  };
  /**
   * The kit's last list of the gateway's grows older than SAVED_CARDS_SYNC_WINDOW_MS (30 s): the
   * next list asks the gateway again, instead of answering from the kit's rows.
   */
  const pastTheSyncWindow = () => t.sandboxClock.advance(30_001);
  /** The customer's list, with `hook` run between the gateway's answer and the kit reading it. */
  const listedWhile = async (customerId: string, token: string, hook: () => Promise<void>) => {
    pastTheSyncWindow();
    whileListed = hook;
    hookFailed = null;
    const listed = await as(token, 'GET', `/customers/${customerId}/cards`);
    if (hookFailed) throw hookFailed;
    return listed;
  };
  const gatewayInstruments = async (customerId: string) =>
    (await t.kit.client.listPaymentInstruments(customerId)).data.payment_instruments;
  const gatewayRecords = (reference: string) =>
    [...t.kit.sandbox!.deps.state.transactions.values()].filter(
      (x) => x.reference === reference && (x.type === 'sale' || x.type === 'auth'),
    );

  it('a card paid with save_card and the customer token is saved: listed by brand, last four and expiry, never a number', async () => {
    const { customerId, token, cardId, order } = await saved();
    const listed = await as(token, 'GET', `/customers/${customerId}/cards`);
    documented.check(listed, 'GET', '/customers/{id}/cards');
    expect(listed.body.data.synced).to.equal(true);
    const [shown] = listed.body.data.cards;
    expect(shown).to.deep.include({
      id: cardId,
      customer_id: customerId,
      brand: 'visa',
      last4: '4242',
      exp_month: 12,
      status: 'active',
      expired: false,
    });
    expect(cardId).to.match(/^card_[A-Za-z0-9]{24}$/);
    expect(listed.text).to.not.contain('4242424242424242');
    expect(listed.text).to.not.match(/vt_/);
    // The gateway keeps it for this customer; the kit keeps its token sealed, and which order saved it.
    const instruments = await gatewayInstruments(customerId);
    expect(instruments).to.have.length(1);
    const stored = (await row(t, 'saved_cards', { id: cardId }))!;
    expect(stored.saved_by_order_id).to.equal(order.id);
    expect(stored.token_sealed).to.match(/^v1\./);
    expect(stored.token_sealed).to.not.contain(instruments[0]!.vault_token);
    expect(await t.kit.store.savedCards.vaultToken(cardId)).to.equal(instruments[0]!.vault_token);
  });

  it('the same card saved again by the same customer is the same saved card', async () => {
    const { customerId, token, cardId } = await saved();
    const again = await newOrder(customerId);
    const paid = await as(token, 'POST', `/orders/${again.id}/pay/card`, {
      card: card(),
      save_card: true,
    });
    expect(paid.status, paid.text).to.equal(200);
    const listed = await as(token, 'GET', `/customers/${customerId}/cards`);
    expect(listed.body.data.cards.map((c: { id: string }) => c.id)).to.deep.equal([cardId]);
    expect(await rows(t, 'saved_cards', { customer_id: customerId })).to.have.length(1);
  });

  it("saving is refused before anything is charged: no token (401), another customer's token (401), an order naming nobody (422)", async () => {
    const customerId = newCustomer();
    const order = await newOrder(customerId);
    const body = { card: card(), save_card: true };
    const none = await as(null, 'POST', `/orders/${order.id}/pay/card`, body);
    expect(none.status, none.text).to.equal(401);
    expect(none.body.code).to.equal('CUSTOMER_TOKEN_REQUIRED');
    documented.check(none, 'POST', '/orders/{id}/pay/card');
    const other = await as(await tokenFor(newCustomer()), 'POST', `/orders/${order.id}/pay/card`, body);
    expect(other.status, other.text).to.equal(401);
    expect(other.body.code).to.equal('CUSTOMER_TOKEN_INVALID');
    const forged = await as('ct1.9999999999.AAAA', 'POST', `/orders/${order.id}/pay/card`, body);
    expect(forged.status, forged.text).to.equal(401);
    const anonymous = await newOrder(null);
    const nobody = await as(await tokenFor(customerId), 'POST', `/orders/${anonymous.id}/pay/card`, body);
    expect(nobody.status, nobody.text).to.equal(422);
    expect(Object.keys(nobody.body.errors)).to.deep.equal(['save_card']);
    // Nothing reached the gateway, and the orders are as they were.
    expect(gatewayRecords(order.reference)).to.deep.equal([]);
    expect(gatewayRecords(anonymous.reference)).to.deep.equal([]);
    expect((await getOrder(t, order.id)).status).to.equal('pending');
  });

  it('a saved card pays a new order of its customer without 3DS; the history names the card', async () => {
    const { customerId, cardId } = await saved(CHALLENGE);
    const order = await newOrder(customerId, '9.99');
    const paid = await as(await tokenFor(customerId, order.id), 'POST', `/orders/${order.id}/pay/saved`, {
      card: cardId,
      mode: 'auth',
    });
    expect(paid.status, paid.text).to.equal(200);
    documented.check(paid, 'POST', '/orders/{id}/pay/saved');
    expect(paid.body.data.next_action).to.equal(null);
    expect(paid.body.data.order.status).to.equal('authorized');
    const [record] = gatewayRecords(order.reference);
    expect(record!.amount).to.equal(999);
    const history = (await getOrder(t, order.id)).history as { detail: string | null }[];
    expect(history.map((h) => h.detail)).to.include(
      `saved card attempt started: visa •••• 3220, 12/${card().exp_year} (${cardId})`,
    );
  });

  it('a card saved through a 3DS challenge is kept once the challenge passes', async () => {
    const customerId = newCustomer();
    const token = await tokenFor(customerId);
    const order = await newOrder(customerId);
    const pay = await as(token, 'POST', `/orders/${order.id}/pay/card`, {
      card: card(CHALLENGE),
      save_card: true,
    });
    expect(pay.status, pay.text).to.equal(200);
    expect(await rows(t, 'saved_cards', { customer_id: customerId })).to.deep.equal([]);
    const back = await pressButton(pay.body.data.next_action.url, 'authenticate');
    expect(landingStatus(await (await fetch(back)).text())).to.equal('paid');
    const kept = await rows(t, 'saved_cards', { customer_id: customerId });
    expect(kept.map((c) => [c.brand, c.last4, c.saved_by_order_id])).to.deep.equal([
      ['visa', '3220', order.id],
    ]);
  });

  it("another customer's card is no card at all: 404, nothing charged", async () => {
    const a = await saved();
    const b = newCustomer();
    const order = await newOrder(b);
    const res = await as(await tokenFor(b, order.id), 'POST', `/orders/${order.id}/pay/saved`, {
      card: a.cardId,
    });
    expect(res.status, res.text).to.equal(404);
    expect(res.body.code).to.equal('CARD_NOT_FOUND');
    expect(Object.keys(res.body.errors)).to.deep.equal(['card']);
    documented.check(res, 'POST', '/orders/{id}/pay/saved');
    // A's token cannot pay B's order either: the order is B's.
    const stolen = await as(a.token, 'POST', `/orders/${order.id}/pay/saved`, { card: a.cardId });
    expect(stolen.status, stolen.text).to.equal(401);
    const listed = await as(a.token, 'GET', `/customers/${b}/cards`);
    expect(listed.status).to.equal(401);
    expect(gatewayRecords(order.reference)).to.deep.equal([]);
  });

  it('the card whose later payments decline: saved, then 402 ERR_CARD_DO_NOT_HONOR with its token', async () => {
    const { customerId, cardId } = await saved(DECLINES_LATER);
    const order = await newOrder(customerId);
    const res = await as(await tokenFor(customerId, order.id), 'POST', `/orders/${order.id}/pay/saved`, {
      card: cardId,
    });
    expect(res.status, res.text).to.equal(402);
    expect(res.body.code).to.equal('ERR_CARD_DO_NOT_HONOR');
    expect(res.body.data.order.status).to.equal('failed');
  });

  it('a customer removes a card: revoked at the gateway, 422 CARD_REVOKED naming card, removing again answers the same', async () => {
    const { customerId, token, cardId } = await saved(MASTERCARD);
    const removed = await as(token, 'DELETE', `/customers/${customerId}/cards/${cardId}`);
    expect(removed.status, removed.text).to.equal(200);
    documented.check(removed, 'DELETE', '/customers/{id}/cards/{card}');
    expect(removed.body.data.card).to.include({ id: cardId, brand: 'mastercard', status: 'revoked' });
    expect(await gatewayInstruments(customerId)).to.deep.equal([]);
    const again = await as(token, 'DELETE', `/customers/${customerId}/cards/${cardId}`);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.card).to.deep.equal(removed.body.data.card);
    expect((await as(token, 'GET', `/customers/${customerId}/cards`)).body.data.cards).to.deep.equal([]);
    const order = await newOrder(customerId);
    const pay = await as(await tokenFor(customerId, order.id), 'POST', `/orders/${order.id}/pay/saved`, {
      card: cardId,
    });
    expect(pay.status, pay.text).to.equal(422);
    expect(pay.body.code).to.equal('CARD_REVOKED');
    expect(Object.keys(pay.body.errors)).to.deep.equal(['card']);
    expect(gatewayRecords(order.reference)).to.deep.equal([]);
  });

  it('a card revoked at the gateway behind the kit: the payment is refused (422 CARD_REVOKED), the attempt undone, the card shown revoked', async () => {
    const { customerId, cardId } = await saved();
    await t.kit.client.revokePaymentInstrument((await t.kit.store.savedCards.vaultToken(cardId))!);
    const order = await newOrder(customerId);
    const pay = await as(await tokenFor(customerId, order.id), 'POST', `/orders/${order.id}/pay/saved`, {
      card: cardId,
    });
    expect(pay.status, pay.text).to.equal(422);
    expect(pay.body.code).to.equal('CARD_REVOKED');
    const now = await getOrder(t, order.id);
    expect(now.status).to.equal('pending');
    expect(now.payment).to.equal(null);
    expect((await row(t, 'saved_cards', { id: cardId }))!.revoked_by).to.equal('gateway');
  });

  it("the gateway's list is the truth: a card it revoked drops out of the kit's list", async () => {
    const { customerId, token, cardId } = await saved();
    await t.kit.client.revokePaymentInstrument((await t.kit.store.savedCards.vaultToken(cardId))!);
    // Within the sync window the kit answers from its rows, which have not heard of it yet.
    const kept = await as(token, 'GET', `/customers/${customerId}/cards`);
    expect(kept.body.data.cards.map((c: { id: string }) => c.id)).to.deep.equal([cardId]);
    pastTheSyncWindow();
    const listed = await as(token, 'GET', `/customers/${customerId}/cards`);
    expect(listed.body.data.cards).to.deep.equal([]);
    expect((await row(t, 'saved_cards', { id: cardId }))!.status).to.equal('revoked');
  });

  it('a card saved while the list was on its way stays saved: the older list does not revoke it', async () => {
    const { customerId, token, cardId } = await saved();
    let second = '';
    const listed = await listedWhile(customerId, token, async () => {
      const order = await newOrder(customerId);
      const paid = await as(token, 'POST', `/orders/${order.id}/pay/card`, {
        card: card(MASTERCARD),
        save_card: true,
      });
      expect(paid.status, paid.text).to.equal(200);
      const mine = await rows(t, 'saved_cards', { customer_id: customerId });
      second = mine.find((r) => r.id !== cardId)!.id as string;
    });
    expect(listed.status, listed.text).to.equal(200);
    expect((await row(t, 'saved_cards', { id: second }))!.status).to.equal('active');
    expect(listed.body.data.cards.map((c: { id: string }) => c.id).sort()).to.deep.equal(
      [cardId, second].sort(),
    );
  });

  it('a card removed while the list was on its way stays removed: the older list does not bring it back', async () => {
    const { customerId, token, cardId } = await saved();
    const listed = await listedWhile(customerId, token, async () => {
      const removed = await as(token, 'DELETE', `/customers/${customerId}/cards/${cardId}`);
      expect(removed.status, removed.text).to.equal(200);
    });
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.data.cards).to.deep.equal([]);
    expect((await row(t, 'saved_cards', { id: cardId }))!.status).to.equal('revoked');
    expect(await gatewayInstruments(customerId)).to.deep.equal([]);
  });

  it('an expired saved card is refused by the kit (422 CARD_EXPIRED naming card) once the month is over', async () => {
    const customerId = newCustomer();
    const token = await tokenFor(customerId);
    const now = new Date(t.clock.now());
    const exp = { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() };
    const first = await newOrder(customerId);
    const paid = await as(token, 'POST', `/orders/${first.id}/pay/card`, {
      card: card('4242424242424242', exp),
      save_card: true,
    });
    expect(paid.status, paid.text).to.equal(200);
    const [kept] = (await as(token, 'GET', `/customers/${customerId}/cards`)).body.data.cards;
    expect(kept.expired).to.equal(false);
    t.sandboxClock.advance(32 * 86_400_000);
    const fresh = await tokenFor(customerId);
    const [lapsed] = (await as(fresh, 'GET', `/customers/${customerId}/cards`)).body.data.cards;
    expect(lapsed.expired).to.equal(true);
    const order = await newOrder(customerId);
    const pay = await as(await tokenFor(customerId, order.id), 'POST', `/orders/${order.id}/pay/saved`, {
      card: kept.id,
    });
    expect(pay.status, pay.text).to.equal(422);
    expect(pay.body.code).to.equal('CARD_EXPIRED');
    expect(Object.keys(pay.body.errors)).to.deep.equal(['card']);
    expect(gatewayRecords(order.reference)).to.deep.equal([]);
  });

  it('customer tokens: only the storefront role (and admin) vouches; a token lapses after an hour', async () => {
    const customerId = newCustomer();
    const refused = await t.call('POST', `/customers/${customerId}/tokens`, { token: operator });
    expect(refused.status).to.equal(403);
    const token = await tokenFor(customerId);
    expect((await as(token, 'GET', `/customers/${customerId}/cards`)).status).to.equal(200);
    t.sandboxClock.advance(61 * 60_000);
    const late = await as(token, 'GET', `/customers/${customerId}/cards`);
    expect(late.status, late.text).to.equal(401);
    expect(late.body.code).to.equal('CUSTOMER_TOKEN_INVALID');
    // An operator reads a customer's cards with their own token; a viewer cannot remove one.
    expect((await t.call('GET', `/customers/${customerId}/cards`, { token: viewer })).status).to.equal(200);
    const bad = await t.call('GET', '/customers/has%20space/cards', { token: viewer });
    expect(bad.status).to.equal(422);
    expect(Object.keys(bad.body.errors)).to.deep.equal(['customer_id']);
  });

  describe('merchant-initiated charges (POST /customers/{id}/charges)', () => {
    const charge = (customerId: string, body: unknown, key: string | null, token = operator) =>
      t.call('POST', `/customers/${customerId}/charges`, {
        token,
        body,
        headers: key === null ? {} : { 'idempotency-key': key },
      });

    it('charges a saved card for a new order; the same key again is the same charge, never a second one', async () => {
      const { customerId, cardId } = await saved();
      const key = `renewal-${customerId}-2026-12`;
      const body = { card: cardId, amount: '4.99', currency: 'EUR', description: 'December' };
      const first = await charge(customerId, body, key);
      expect(first.status, first.text).to.equal(201);
      documented.check(first, 'POST', '/customers/{id}/charges');
      const order = first.body.data.order;
      expect(order).to.include({ status: 'paid', amount: 499, currency: 'EUR', description: 'December' });
      expect(order.customer).to.deep.equal({ merchant_customer_id: customerId });
      const again = await charge(customerId, body, key);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order.id).to.equal(order.id);
      expect(gatewayRecords(order.reference)).to.have.length(1);
      const history = (await getOrder(t, order.id)).history as { detail: string | null }[];
      expect(
        history.some((h) => h.detail?.includes(`(${cardId}), charged by olga (operator)`)),
        JSON.stringify(history),
      ).to.equal(true);
      const audit = await rows(t, 'audit_log', { action: 'card.charge', order_id: order.id });
      expect(audit.map((a) => a.actor)).to.deep.equal(['olga', 'olga']);
    });

    it('the key is required (422 naming it); reused for another amount, 409; a viewer, 403', async () => {
      const { customerId, cardId } = await saved();
      const body = { card: cardId, amount: '4.99', currency: 'EUR' };
      const nokey = await charge(customerId, body, null);
      expect(nokey.status).to.equal(422);
      expect(Object.keys(nokey.body.errors)).to.deep.equal(['Idempotency-Key']);
      // Everything wrong at once: the header beside the body's fields, and beside the shop's rules.
      const allWrong = await charge(customerId, { ...body, amount: '4.999', mode: 'later' }, null);
      expect(allWrong.status).to.equal(422);
      expect(Object.keys(allWrong.body.errors).sort()).to.deep.equal(['Idempotency-Key', 'amount', 'mode']);
      const overMax = await charge(customerId, { ...body, amount: '2000000.00' }, null);
      expect(Object.keys(overMax.body.errors).sort(), overMax.text).to.deep.equal([
        'Idempotency-Key',
        'amount',
      ]);
      const key = `k-${customerId}`;
      expect((await charge(customerId, body, key)).status).to.equal(201);
      const reused = await charge(customerId, { ...body, amount: '5.99' }, key);
      expect(reused.status, reused.text).to.equal(409);
      expect(reused.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
      expect((await charge(customerId, body, `v-${customerId}`, viewer)).status).to.equal(403);
    });

    it('the key holds its card and mode: another card or mode with it is a 409, and nothing is charged', async () => {
      const { customerId, token, cardId } = await saved();
      const order = await newOrder(customerId);
      const paid = await as(token, 'POST', `/orders/${order.id}/pay/card`, {
        card: card('5555555555554444'),
        mode: 'sale',
        save_card: true,
      });
      expect(paid.body.data?.order?.status, paid.text).to.equal('paid');
      const cards = (await as(token, 'GET', `/customers/${customerId}/cards`)).body.data.cards as {
        id: string;
      }[];
      const otherId = cards.map((c) => c.id).find((id) => id !== cardId)!;
      const key = `terms-${customerId}`;
      const body = { card: cardId, amount: '4.99', currency: 'EUR', mode: 'sale' };
      const first = await charge(customerId, body, key);
      expect(first.status, first.text).to.equal(201);
      const reference = first.body.data.order.reference as string;
      expect(first.body.data.order.payment.saved_card_id, 'the order names the card that paid').to.equal(
        cardId,
      );
      for (const other of [
        { ...body, card: otherId },
        { ...body, mode: 'auth' },
      ]) {
        const reused = await charge(customerId, other, key);
        expect(reused.status, reused.text).to.equal(409);
        expect(reused.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
        expect(reused.body.data.order.id).to.equal(first.body.data.order.id);
        expect(reused.body.data.order.payment, 'the order as it stands, its payment too').to.include({
          saved_card_id: cardId,
          gateway_transaction_id: first.body.data.order.payment.gateway_transaction_id,
        });
      }
      expect((await charge(customerId, body, key)).status, 'the same terms: the same charge').to.equal(200);
      expect(gatewayRecords(reference)).to.have.length(1);
      const audit = await rows(t, 'audit_log', { action: 'card.charge', order_id: first.body.data.order.id });
      expect(audit, 'the refused requests charged nothing, so the audit has none of them').to.have.length(2);
    });

    it('a card removed or expired after its charge: the same key again is that charge (200), a new key 422 and no order', async () => {
      const now = new Date(t.clock.now());
      const thisMonth = { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() };
      const removed = await saved('4242424242424242');
      const expiring = await saved('5555555555554444', thisMonth);
      const charged = new Map<string, { id: string; reference: string }>();
      for (const { customerId, cardId } of [removed, expiring]) {
        const first = await charge(
          customerId,
          { card: cardId, amount: '4.99', currency: 'EUR' },
          `renew-${customerId}`,
        );
        expect(first.status, first.text).to.equal(201);
        charged.set(customerId, first.body.data.order);
      }
      const gone = await as(
        removed.token,
        'DELETE',
        `/customers/${removed.customerId}/cards/${removed.cardId}`,
      );
      expect(gone.status, gone.text).to.equal(200);
      t.sandboxClock.advance(32 * 86_400_000);

      for (const [{ customerId, cardId }, code] of [
        [removed, 'CARD_REVOKED'],
        [expiring, 'CARD_EXPIRED'],
      ] as const) {
        const body = { card: cardId, amount: '4.99', currency: 'EUR' };
        // A renewal job retrying after a lost answer: the money moved, the answer is that charge.
        const again = await charge(customerId, body, `renew-${customerId}`);
        expect(again.status, again.text).to.equal(200);
        expect(again.body.data.order).to.include({ id: charged.get(customerId)!.id, status: 'paid' });
        expect(gatewayRecords(charged.get(customerId)!.reference)).to.have.length(1);
        // A new charge: refused before anything is stored.
        const ordersBefore = (await rows(t, 'orders', {})).length;
        const next = await charge(customerId, body, `next-${customerId}`);
        expect(next.status, next.text).to.equal(422);
        expect(next.body.code).to.equal(code);
        expect(Object.keys(next.body.errors)).to.deep.equal(['card']);
        expect((await rows(t, 'orders', {})).length, 'no order made').to.equal(ordersBefore);
        const fork = await t.kit.chargeSavedCard({
          customerId,
          cardId,
          amountMinor: 499,
          currency: 'EUR',
          idempotencyKey: `renew-${customerId}`,
        });
        expect(fork).to.include({ kind: 'done', created: false });
        expect(
          await t.kit.chargeSavedCard({
            customerId,
            cardId,
            amountMinor: 499,
            currency: 'EUR',
            idempotencyKey: `fork-${customerId}`,
          }),
        ).to.include({ kind: 'card_refused', code });
      }
    });

    it('a decline is answered as such, and the same key again answers the same decline without charging again', async () => {
      const { customerId, cardId } = await saved(DECLINES_LATER);
      const key = `decline-${customerId}`;
      const body = { card: cardId, amount: '3.00', currency: 'EUR' };
      const first = await charge(customerId, body, key);
      expect(first.status, first.text).to.equal(402);
      expect(first.body.code).to.equal('ERR_CARD_DO_NOT_HONOR');
      const again = await charge(customerId, body, key);
      expect(again.status, again.text).to.equal(402);
      expect(again.body.data.order.id).to.equal(first.body.data.order.id);
      expect(gatewayRecords(first.body.data.order.reference)).to.have.length(1);
    });

    it('a charge the gateway could not take (down) charged nothing: the same key tries again, and charges once', async () => {
      const { customerId, cardId } = await saved();
      const key = `down-${customerId}`;
      const body = { card: cardId, amount: '6.00', currency: 'EUR' };
      refuseTransactions = true;
      const first = await charge(customerId, body, key);
      refuseTransactions = false;
      expect(first.status, first.text).to.equal(503);
      expect(first.body.code).to.equal('GATEWAY_UNAVAILABLE');
      const order = first.body.data.order;
      expect(gatewayRecords(order.reference)).to.deep.equal([]);
      const again = await charge(customerId, body, key);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.order).to.include({ id: order.id, status: 'paid' });
      expect(gatewayRecords(order.reference)).to.have.length(1);
    });

    it('the kit died after the gateway took the charge: the retry with the same key adopts it, and nothing is charged twice', async () => {
      const { customerId, cardId } = await saved();
      const key = `crash-${customerId}`;
      const reference = chargeReference(customerId, key);
      // What the process that died had done: the order stored, an attempt started, the charge sent.
      const order = await storeOrder(t, {
        amountMinor: 1500,
        currency: 'EUR',
        reference,
        customer: { merchant_customer_id: customerId },
      });
      await t.kit.store.orders.startAttempt(order.id, { kind: 'card', mode: 'sale' });
      const sent = await fetch(`${t.kit.gatewayUrl}/api/v1/transactions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          amount: 15,
          currency: 'EUR',
          transaction_type: 'sale',
          reference,
          vault_token: await t.kit.store.savedCards.vaultToken(cardId),
        }),
      });
      expect(sent.status).to.equal(200);
      const retry = await charge(customerId, { card: cardId, amount: '15.00', currency: 'EUR' }, key);
      expect(retry.status, retry.text).to.equal(200);
      expect(retry.body.data.order).to.include({ id: order.id, status: 'paid' });
      expect(gatewayRecords(reference)).to.have.length(1);
    });
  });
});
