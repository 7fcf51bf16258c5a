import { expect } from 'chai';
import { openHold } from '../../../src/merchant/checkout/hold.js';
import type { Actor } from '../../../src/merchant/operators/roles.js';
import { type OrderEvent, OrderEventHandlers } from '../../../src/merchant/outbox/handlers.js';
import type { ApiDocument } from '../../../src/shared/api-document.js';
import { responseChecker } from '../../support/api-document.js';
import { rows } from '../../support/db.js';
import {
  event,
  post,
  processed,
  referenceSettled,
  sandboxCall,
  stateOf,
  storedSecret,
  wire,
} from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import {
  cliEnv,
  getOrder,
  landingStatus,
  pressButton,
  startTestKit,
  type TestKit,
} from '../../support/kit.js';
import { type Person, person, traces, tracesFound } from '../../support/people.js';
import { exitWithin, lines, start } from '../../support/process.js';

/**
 * Issue 43, part 4, through the kit's HTTP API against the embedded sandbox: a customer with paid,
 * disputed and in-flight orders, a saved card, kept webhook payloads and order events is forgotten.
 * After it, a dump of every table holds nothing of them; the report's totals are what they were; the
 * orders still reconcile, take refunds and finish the payment that was open; a second erasure finds
 * nothing; only admin may ask for one.
 */
const CLI: Actor = { name: 'root', role: 'admin', credential: 'cli' };
const CHALLENGE = '4000000000003220';
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('merchant: forgetting a customer (issue 43, part 4)', function () {
  this.timeout(180_000);
  let t: TestKit;
  let documented: Awaited<ReturnType<typeof responseChecker>>;
  const tokens: Record<string, string> = {};
  const delivered: OrderEvent[] = [];
  let range = '';
  const ada = person('erase', 1);
  const other = person('erase', 2);
  /** What the main test made, for the ones after it. */
  const made = {
    paid: { id: '', reference: '', transaction: '' },
    disputed: { id: '', reference: '', transaction: '' },
    challenged: { id: '', reference: '', url: '' },
    reference: '',
  };

  before(async () => {
    t = await startTestKit({
      orderEvents: new OrderEventHandlers().on('*', (e) => void delivered.push(e), 'erasure-test'),
    });
    documented = await responseChecker((await t.call('GET', '/openapi.json')).body as ApiDocument);
    for (const role of ['storefront', 'operator', 'finance', 'viewer'] as const)
      tokens[role] = (await t.kit.store.operators.add({ name: `${role}-e`, role, by: CLI })).token;
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today - DAY)}&to=${dayOf(today + 2 * DAY)}`;
  });
  after(async () => {
    await t?.close();
  });

  const erase = (customerId: string, o: { token?: string; ops?: boolean } = { ops: true }) =>
    t.call('POST', `/customers/${encodeURIComponent(customerId)}/erase`, o);
  const control = async (path: string, body: unknown = {}) => {
    t.sandboxClock.advance(1000);
    const res = await sandboxCall(t, 'POST', path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
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
  const transactionOf = async (id: string) =>
    (await getOrder(t, id)).payment.gateway_transaction_id as string;
  // biome-ignore lint/suspicious/noExplicitAny: the report's rows of every shape
  const report = async (): Promise<any> => {
    const res = await t.call('GET', `/reports/reconciliation?${range}`, { ops: true });
    expect(res.status, res.text).to.equal(200);
    const { generated_at: _, ...rest } = res.body.data;
    return rest;
  };
  const found = (p: Person) => tracesFound(t, p);

  it('only admin erases: no token 401, every role 403 naming admin', async () => {
    const refused = await erase(ada.merchant_customer_id, {});
    expect(refused.status, refused.text).to.equal(401);
    for (const role of ['storefront', 'operator', 'finance', 'viewer']) {
      const res = await erase(ada.merchant_customer_id, { token: tokens[role]! });
      expect(res.status, `${role}: ${res.text}`).to.equal(403);
      expect(res.body.code).to.equal('FORBIDDEN');
      expect(res.body.data.allowed).to.deep.equal(['admin']);
      documented.check(res, 'POST', '/customers/{id}/erase');
    }
    const bad = await erase('has space');
    expect(bad.status, bad.text).to.equal(422);
    expect(bad.body.errors).to.have.property('customer_id');
  });

  it('erases every personal field everywhere the kit kept one, and no money fact: the dump holds nothing of the customer, the report is the same', async () => {
    // The shop's server vouches for its signed-in customer (an audit line naming their id).
    const vouched = await t.call('POST', `/customers/${ada.merchant_customer_id}/tokens`, {
      token: tokens.storefront,
    });
    expect(vouched.status, vouched.text).to.equal(201);
    const customerToken = vouched.body.data.customer_token as string;

    // A paid order whose card is saved for them.
    const paid = await newOrder(ada, '40.00');
    const saved = await pay(
      paid.id,
      { card: card(), save_card: true, customer: ada },
      { 'customer-token': customerToken },
    );
    expect(saved.order.status).to.equal('paid');
    made.paid = { ...paid, transaction: await transactionOf(paid.id) };
    const [instrument] = (await t.kit.client.listPaymentInstruments(ada.merchant_customer_id)).data
      .payment_instruments;
    expect(instrument, 'the card is saved at the gateway').to.not.equal(undefined);

    // A paid order, then partly charged back: disputed.
    const disputed = await newOrder(ada, '20.00');
    await pay(disputed.id, { card: card(), customer: ada });
    made.disputed = { ...disputed, transaction: await transactionOf(disputed.id) };
    await control(`/sandbox/transactions/${made.disputed.transaction}/chargeback`, { amount: 5 });
    await referenceSettled(t, disputed.reference);
    expect((await getOrder(t, disputed.id)).status).to.equal('disputed');

    // A payment waiting on its 3DS challenge: the card and the customer's details held, sealed.
    const challenged = await newOrder(ada, '15.00');
    const action = await pay(challenged.id, { card: card(CHALLENGE), customer: ada });
    expect(action.next_action?.type).to.equal('redirect');
    made.challenged = { ...challenged, url: action.next_action.url };

    // Someone else, who stays.
    const kept = await newOrder(other, '10.00');
    await pay(kept.id, { card: card(), customer: other });

    // A gateway that puts the customer in its payloads (gateway-api.md: fields may be added).
    const sale = stateOf(t).transactions.get(Number(made.paid.transaction))!;
    const personal = event('transaction.captured', {
      ...wire(sale),
      customer: { ...ada },
      ip_address: ada.ip_address,
      description: `Order for ${ada.email}`,
    });
    expect((await post(t, personal.body, await storedSecret(t))).status).to.equal(200);
    await processed(t, personal.id);

    // The shop's handlers get the order events, the customer in them.
    await t.kit.dispatchOrderEvents();
    expect(delivered.some((e) => e.data.order.customer?.email === ada.email)).to.equal(true);

    expect(await found(ada), 'the customer is in the database before').to.deep.equal(traces(ada));
    const before = await report();

    const res = await erase(ada.merchant_customer_id);
    expect(res.status, res.text).to.equal(200);
    documented.check(res, 'POST', '/customers/{id}/erase');
    const erased = res.body.data;
    made.reference = erased.customer.reference;
    expect(erased.customer.reference).to.match(/^cer_[0-9a-f]{32}$/);
    expect(erased).to.deep.include({
      orders: 3,
      saved_cards: { revoked_at_gateway: 1, removed: 1 },
      webhook_events: 1,
      held_payments: 1,
    });
    expect(erased.order_events).to.equal(
      (await rows(t, 'order_events', { order_id: [paid.id, disputed.id, challenged.id] })).length,
    );
    expect(erased.order_events).to.be.at.least(3);
    expect(erased.audit_lines).to.equal(1);

    expect(await found(ada), 'nothing of the customer is left').to.deep.equal([]);
    expect(await found(other), 'the other customer is untouched').to.deep.equal(traces(other));
    expect(await report(), "the report's rows and totals").to.deep.equal(before);

    for (const id of [paid.id, disputed.id, challenged.id]) {
      const order = await getOrder(t, id);
      expect(order.customer).to.deep.equal({ erased: true, erased_at: erased.customer.erased_at });
      expect(order.history.at(-1)).to.include({ source: 'api', outcome: 'applied' });
    }
    const outbox = await rows(t, 'order_events', { order_id: paid.id });
    for (const e of outbox) expect(JSON.parse(e.payload).data.order.customer).to.include({ erased: true });
    // The gateway keeps no instrument of theirs; the kit no card.
    expect(
      (await t.kit.client.listPaymentInstruments(ada.merchant_customer_id)).data.payment_instruments,
    ).to.deep.equal([]);
    // The held payment keeps its card, not the customer.
    const [attempt] = await rows(t, 'payment_attempts', { order_id: challenged.id });
    const hold = openHold(t.kit.box, attempt!.id, attempt!.hold_sealed);
    expect(hold.card.number).to.equal(CHALLENGE);
    expect(hold).to.not.have.any.keys('customer', 'browserIp', 'saveFor');
    // The audit: who erased, by the customer's reference; the earlier line names the reference too.
    const audit = await rows(t, 'audit_log', { subject_id: erased.customer.reference });
    expect(audit.map((l) => [l.action, l.actor, l.role])).to.deep.equal([
      ['customer.erase', 'admin', 'admin'],
    ]);
    const vouchedLine = await rows(t, 'audit_log', { action: 'customer.vouch' });
    expect(vouchedLine[0]!.detail).to.equal(`customer ${erased.customer.reference}: lists and removes cards`);
  });

  it('the erased orders still reconcile and take refunds, and the payment open at the erasure completes without the customer', async () => {
    const refunded = await t.call('POST', `/orders/${made.paid.id}/refund`, {
      ops: true,
      body: { amount: '10.00', reason: 'asked' },
      headers: { 'idempotency-key': `erased-refund-${made.paid.id}` },
    });
    expect(refunded.status, refunded.text).to.equal(200);
    expect(refunded.body.data.order).to.include({ status: 'partially_refunded', refunded_amount: 1000 });

    // The gateway's own news after the erasure: the dispute won, by webhook.
    await control(`/sandbox/transactions/${made.disputed.transaction}/chargeback/reverse`);
    await referenceSettled(t, made.disputed.reference);
    expect(await getOrder(t, made.disputed.id)).to.include({ status: 'paid', disputed_amount: 0 });

    // The challenge answered: the card pays; the customer's details went nowhere.
    const back = await pressButton(made.challenged.url, 'authenticate');
    expect(landingStatus(await (await fetch(back)).text())).to.equal('paid');
    const record = stateOf(t).transactions.get(Number(await transactionOf(made.challenged.id)))!;
    expect(record.ipAddress).to.not.equal(ada.ip_address);
    expect(await found(ada)).to.deep.equal([]);
  });

  it('a second erasure finds nothing left: zeros, the same reference, its own audit line', async () => {
    const again = await erase(ada.merchant_customer_id);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data).to.deep.include({
      customer: { reference: made.reference, erased_at: again.body.data.customer.erased_at },
      orders: 0,
      saved_cards: { revoked_at_gateway: 0, removed: 0 },
      webhook_events: 0,
      order_events: 0,
      held_payments: 0,
      audit_lines: 0,
    });
    expect(await rows(t, 'audit_log', { subject_id: made.reference })).to.have.length(2);
  });

  it('cli customers erase: the same erasure from the command line, in JSON; a bad id is one line', async () => {
    const eve = person('erase', 3);
    const order = await newOrder(eve, '5.00');
    const env = {
      ...cliEnv(t),
      GATEWAY_BASE_URL: t.kit.gatewayUrl,
      GATEWAY_API_KEY: MERCHANT_KEY,
    };
    const p = start('src/cli.ts', ['customers', 'erase', eve.merchant_customer_id, '--by', 'dpo'], env);
    const { code } = await exitWithin(p, 90_000);
    expect(code, p.stderr()).to.equal(0);
    expect(JSON.parse(p.stdout())).to.deep.include({ orders: 1, held_payments: 0 });
    expect((await getOrder(t, order.id)).customer).to.include({ erased: true });
    expect(await found(eve)).to.deep.equal([]);
    const [line] = await rows(t, 'audit_log', { action: 'customer.erase', actor: 'dpo' });
    expect(line).to.include({ role: 'admin', credential: 'cli' });

    const bad = start('src/cli.ts', ['customers', 'erase', 'has space'], env);
    expect((await exitWithin(bad, 60_000)).code).to.equal(1);
    expect(lines(bad.stderr())).to.deep.equal(['<customer_id>: must be printable ASCII without spaces']);
  });
});
