import { expect } from 'chai';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { rows } from '../../support/db.js';
import { event, post, processed, stateOf, storedSecret, wire } from '../../support/events.js';
import { card } from '../../support/gateway.js';
import { getOrder, landingStatus, pressButton, startTestKit, type TestKit } from '../../support/kit.js';
import { type Person, person, tracesFound } from '../../support/people.js';

/**
 * Issue 43, part 4, at its edges, through the kit's HTTP API against the embedded sandbox: an erasure
 * stopped part-way finishes when sent again, and a card payment with `save_card` still in flight when
 * its customer is erased keeps no card for them, at the kit or at the gateway.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const CHALLENGE = '4000000000003220';

describe('merchant: forgetting a customer, at its edges (issue 43, part 4)', function () {
  this.timeout(180_000);
  let t: TestKit;
  let storefront = '';
  /** While set, a saving POST /transactions waits for it before it leaves the kit. */
  let gate: { reached: () => void; open: Promise<void> } | null = null;

  before(async () => {
    t = await startTestKit({
      clientDeps: {
        fetch: async (input, init) => {
          const saving =
            String(input).endsWith('/api/v1/transactions') &&
            String(init?.body ?? '').includes('"save_payment_instrument":true');
          if (saving && gate) {
            const g = gate;
            gate = null;
            g.reached();
            await g.open;
          }
          return fetch(input, init);
        },
      },
    });
    storefront = (await t.kit.store.operators.add({ name: 'shop-edge', role: 'storefront', by: CLI })).token;
  });
  after(async () => {
    await t?.close();
  });

  const erase = (customerId: string) =>
    t.call('POST', `/customers/${encodeURIComponent(customerId)}/erase`, { ops: true });
  const newOrder = async (customer: Person, amount: string) => {
    const res = await t.call('POST', '/orders', { body: { amount, currency: 'EUR', customer } });
    expect(res.status, res.text).to.equal(201);
    return res.body.data.order as { id: string; reference: string };
  };
  const pay = async (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await t.call('POST', `/orders/${id}/pay/card`, { body: { mode: 'sale', ...body }, headers });
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };
  const customerToken = async (customerId: string) => {
    const res = await t.call('POST', `/customers/${customerId}/tokens`, { token: storefront });
    expect(res.status, res.text).to.equal(201);
    return res.body.data.customer_token as string;
  };
  const found = (p: Person) => tracesFound(t, p);
  const instruments = async (customerId: string) =>
    (await t.kit.client.listPaymentInstruments(customerId)).data.payment_instruments;

  it('an erasure stopped part-way (the database failing as it scrubs a kept payload) finishes when sent again: nothing of the customer is left', async () => {
    const grace = person('edge', 1);
    // A paid order, a kept webhook payload naming the customer.
    const paid = await newOrder(grace, '12.00');
    await pay(paid.id, { card: card(), customer: grace });
    const transaction = (await getOrder(t, paid.id)).payment.gateway_transaction_id as string;
    const sale = stateOf(t).transactions.get(Number(transaction))!;
    const personal = event('transaction.captured', {
      ...wire(sale),
      customer: { ...grace },
      description: `Order for ${grace.email}`,
    });
    expect((await post(t, personal.body, await storedSecret(t))).status).to.equal(200);
    await processed(t, personal.id);
    // A payment waiting on its 3DS challenge: the customer's details held, sealed.
    const challenged = await newOrder(grace, '7.00');
    const action = await pay(challenged.id, { card: card(CHALLENGE), customer: grace });
    expect(action.next_action?.type).to.equal('redirect');

    // The database refuses to rewrite a kept payload: the erasure stops there.
    await t.kit.sequelize.query(
      `CREATE TRIGGER erase_fault BEFORE UPDATE ON webhook_inbox FOR EACH ROW
       BEGIN
         IF NOT (NEW.payload <=> OLD.payload) THEN
           SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected fault';
         END IF;
       END`,
    );
    try {
      const stopped = await erase(grace.merchant_customer_id);
      expect(stopped.status, stopped.text).to.equal(500);
    } finally {
      await t.kit.sequelize.query('DROP TRIGGER IF EXISTS erase_fault');
    }

    const again = await erase(grace.merchant_customer_id);
    expect(again.status, again.text).to.equal(200);
    expect(await found(grace), 'nothing of the customer is left').to.deep.equal([]);
    for (const id of [paid.id, challenged.id])
      expect((await getOrder(t, id)).customer).to.include({ erased: true });
    const reference = again.body.data.customer.reference as string;
    expect((await rows(t, 'audit_log', { subject_id: reference })).map((l) => l.action)).to.include(
      'customer.erase',
    );
  });

  it('a save_card payment waiting at its challenge when the customer is erased pays, and keeps no card', async () => {
    const hedy = person('edge', 2);
    const id = hedy.merchant_customer_id;
    const order = await newOrder(hedy, '9.00');
    const action = await pay(
      order.id,
      { card: card(CHALLENGE), save_card: true, customer: hedy },
      { 'customer-token': await customerToken(id) },
    );
    expect(action.next_action?.type).to.equal('redirect');

    expect((await erase(id)).status).to.equal(200);
    const back = await pressButton(action.next_action.url, 'authenticate');
    expect(landingStatus(await (await fetch(back)).text())).to.equal('paid');

    expect((await getOrder(t, order.id)).status).to.equal('paid');
    expect(await rows(t, 'saved_cards', { customer_id: id })).to.deep.equal([]);
    expect(await instruments(id)).to.deep.equal([]);
  });

  it('a save_card payment whose gateway answer is pending when the customer is erased pays, and the card it saved is revoked, not kept', async () => {
    const mary = person('edge', 3);
    const id = mary.merchant_customer_id;
    const order = await newOrder(mary, '11.00');
    const action = await pay(
      order.id,
      { card: card(CHALLENGE), save_card: true, customer: mary },
      { 'customer-token': await customerToken(id) },
    );
    // The challenge answered: the kit takes the hold and its saving transaction waits at the gate.
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    gate = { reached, open: new Promise<void>((resolve) => (open = resolve)) };
    const back = await pressButton(action.next_action.url, 'authenticate');
    const landing = fetch(back).then((res) => res.text());
    await atGate;

    const erased = await erase(id);
    open();
    expect(erased.status, erased.text).to.equal(200);
    expect(landingStatus(await landing)).to.equal('paid');

    expect((await getOrder(t, order.id)).status).to.equal('paid');
    expect(await rows(t, 'saved_cards', { customer_id: id }), 'no card kept for them').to.deep.equal([]);
    expect(await instruments(id), 'nothing active at the gateway').to.deep.equal([]);
  });
});
