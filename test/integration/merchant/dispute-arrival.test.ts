import { expect } from 'chai';
import { deliveriesOff, poster, processed, stateOf, storedSecret } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { ADMIN_URL, exitWithin, lines, start } from '../../support/process.js';
import { expectOrdersTrue } from '../../support/truth.js';

/**
 * Issue 44, part 3: dispute records keyed by what the gateway says. The sandbox charges a payment
 * back, reverses it and charges it back again (its HTTP triggers); its deliveries are off, and the
 * test hands the kit's receiver the sandbox's own signed events in an order of its choosing. Out of
 * order, the kit keeps the same records as in order: one per chargeback, each with its amount and
 * its ending; and the lists, the CLI and the report read them right.
 */
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Dispute {
  id: string;
  amount: number;
  outcome: string;
  opened_at: string;
  closed_at: string | null;
  closed_by: string | null;
}

describe('merchant: dispute records whatever the order chargebacks and reversals arrive in (issue 44, part 3)', function () {
  this.timeout(120_000);
  let t: TestKit;
  let post: ReturnType<typeof poster>;
  let secret: string;
  before(async () => {
    t = await startTestKit();
    await deliveriesOff(t);
    secret = await storedSecret(t);
    post = poster(t);
  });
  after(async () => {
    await t?.close();
  });

  /** A sandbox trigger, a minute after the one before by the gateway's clock (the outage lasts a day). */
  const trigger = async (path: string, body: unknown = {}) => {
    t.sandboxClock.advance(60_000);
    const res = await fetch(`${t.kit.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
  };
  /** A paid card sale: its order's id and the gateway's transaction id. */
  const paidOrder = async () => {
    const created = await t.call('POST', '/orders', { body: { amount: '20.00', currency: 'EUR' } });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data.order.id as string;
    const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
    expect(paid.status, paid.text).to.equal(200);
    return { id, transaction: (await getOrder(t, id)).payment.gateway_transaction_id as string };
  };
  /** Charged back 10.00, reversed, charged back 7.50 (and reversed again): the sandbox's events, in turn. */
  const disputedTwice = async (transaction: string, reversedAgain = false) => {
    await trigger(`/sandbox/transactions/${transaction}/chargeback`, { amount: 10 });
    await trigger(`/sandbox/transactions/${transaction}/chargeback/reverse`);
    await trigger(`/sandbox/transactions/${transaction}/chargeback`, { amount: 7.5 });
    if (reversedAgain) await trigger(`/sandbox/transactions/${transaction}/chargeback/reverse`);
    return eventsOf(transaction);
  };
  const eventsOf = (transaction: string) =>
    [...stateOf(t).webhooks.events.values()]
      .filter((e) => e.transactionId === Number(transaction) && e.type.startsWith('transaction.chargeback'))
      .sort((a, b) => a.createdAt - b.createdAt);
  /** The sandbox's signed body, handed to the receiver: 200 each. */
  const deliver = async (events: { id: string; body: string }[], wait = true) => {
    for (const e of events) {
      const answer = await post(e.body, { secret });
      expect(answer.status, answer.text).to.equal(200);
      if (wait) await processed(t, e.id);
    }
    for (const e of events) await processed(t, e.id);
  };
  const disputesOf = async (id: string) => (await getOrder(t, id)).disputes as Dispute[];
  /** What a record says apart from its id: comparable across orders. */
  const shape = (d: Dispute[]) => d.map(({ amount, outcome, closed_by }) => ({ amount, outcome, closed_by }));
  const gatewayTime = (event: { body: string }) =>
    new Date(JSON.parse(event.body).data.transaction.updated_at).toISOString();

  let outOfOrder: { id: string; transaction: string };
  let inOrder: { id: string; transaction: string };
  let reversedTwice: { id: string; transaction: string };

  it('a chargeback, its reversal and a second chargeback, the second delivered first: two records, as in order', async () => {
    outOfOrder = await paidOrder();
    inOrder = await paidOrder();
    const [cb1, rev1, cb2] = await disputedTwice(outOfOrder.transaction);
    expect([cb1!.type, rev1!.type, cb2!.type]).to.deep.equal([
      'transaction.chargeback',
      'transaction.chargeback_reversed',
      'transaction.chargeback',
    ]);
    await deliver([cb2!, rev1!, cb1!]);
    await deliver(await disputedTwice(inOrder.transaction));

    const order = await getOrder(t, outOfOrder.id);
    expect(order).to.include({ status: 'disputed', disputed_amount: 750, needs_review: false });
    const records = await disputesOf(outOfOrder.id);
    expect(shape(records)).to.deep.equal([
      { amount: 750, outcome: 'open', closed_by: null },
      { amount: 1000, outcome: 'won', closed_by: 'gateway' },
    ]);
    // Dated by the gateway: each chargeback's time, and the reversal's.
    expect(records.map((r) => r.opened_at)).to.deep.equal([gatewayTime(cb2!), gatewayTime(cb1!)]);
    expect(records[1]!.closed_at).to.equal(gatewayTime(rev1!));
    // The same as the order whose events came in turn.
    expect(shape(await disputesOf(inOrder.id))).to.deep.equal(shape(records));
    expect(await getOrder(t, inOrder.id)).to.include({ status: 'disputed', disputed_amount: 750 });
  });

  it('all four events handed over at once, latest first (applied together): two records, both won, the order paid', async () => {
    reversedTwice = await paidOrder();
    const events = await disputedTwice(reversedTwice.transaction, true);
    expect(events).to.have.length(4);
    await deliver([...events].reverse(), false);
    // Every one again, as a gateway's retries would: nothing changes.
    await deliver(
      events.map((e) => ({ ...e })),
      false,
    );
    expect(await getOrder(t, reversedTwice.id)).to.include({ status: 'paid', disputed_amount: 0 });
    const records = await disputesOf(reversedTwice.id);
    expect(shape(records)).to.deep.equal([
      { amount: 750, outcome: 'won', closed_by: 'gateway' },
      { amount: 1000, outcome: 'won', closed_by: 'gateway' },
    ]);
    expect(records.map((r) => r.closed_at)).to.deep.equal([gatewayTime(events[3]!), gatewayTime(events[1]!)]);
    await expectOrdersTrue(t);
  });

  it('GET /disputes, `cli disputes list|lost` and the report read them right; a reversal after a loss wins it', async () => {
    const listed = await t.call('GET', '/disputes?outcome=open', { ops: true });
    expect(listed.status, listed.text).to.equal(200);
    const open = listed.body.data.disputes as (Dispute & { order_id: string })[];
    expect(open.map((d) => [d.order_id, d.amount]).sort()).to.deep.equal(
      [
        [outOfOrder.id, 750],
        [inOrder.id, 750],
      ].sort(),
    );
    const all = (await t.call('GET', '/disputes', { ops: true })).body.data.disputes as Dispute[];
    expect(all).to.have.length(6);

    const cli = async (args: string[]) => {
      const p = start('src/cli.ts', ['disputes', ...args], {
        DATABASE_URL: `${ADMIN_URL}/${t.database}`,
        // The kit's key: the CLI opens the signing secrets it sealed.
        APP_ENCRYPTION_KEY: t.config.encryptionKey.toString('base64'),
      });
      const { code } = await exitWithin(p, 60_000);
      expect(code, p.stderr()).to.equal(0);
      return JSON.parse(lines(p.stdout()).join('\n'));
    };
    const won = (await cli(['list', '--outcome', 'won'])) as (Dispute & { order_id: string })[];
    expect(won.map((d) => d.order_id).sort()).to.deep.equal(
      [outOfOrder.id, inOrder.id, reversedTwice.id, reversedTwice.id].sort(),
    );
    const [second] = await disputesOf(outOfOrder.id);
    const lost = await cli([
      'lost',
      second!.id,
      '--note',
      'the issuer ruled for the cardholder',
      '--by',
      'fran',
    ]);
    expect(lost.dispute).to.include({ id: second!.id, outcome: 'lost', closed_by: 'fran' });

    const today = Math.floor(t.clock.now() / DAY) * DAY;
    const report = async () => {
      const answer = await t.call(
        'GET',
        `/reports/reconciliation?from=${dayOf(today)}&to=${dayOf(today + DAY)}`,
        {
          ops: true,
        },
      );
      expect(answer.status, answer.text).to.equal(200);
      return answer.body.data;
    };
    let data = await report();
    const outcomeOf = (id: string) =>
      (data.rows as { order_id: string; dispute_outcome: string }[]).find((r) => r.order_id === id)
        ?.dispute_outcome;
    expect([outOfOrder.id, inOrder.id, reversedTwice.id].map(outcomeOf)).to.deep.equal([
      'lost',
      'open',
      'won',
    ]);
    const charged = () =>
      [outOfOrder, inOrder, reversedTwice]
        .map((o) => stateOf(t).transactions.get(Number(o.transaction))!.chargebackAmount)
        .reduce((a, b) => a + b, 0);
    const eur = () => data.totals.find((x: { currency: string }) => x.currency === 'EUR');
    expect(eur()).to.include({ disputed: charged() });
    expect(charged()).to.equal(1500);

    // The bank reverses it after all: the gateway's word is the last.
    await trigger(`/sandbox/transactions/${outOfOrder.transaction}/chargeback/reverse`);
    await deliver(eventsOf(outOfOrder.transaction).slice(3));
    expect(shape(await disputesOf(outOfOrder.id))).to.deep.equal([
      { amount: 750, outcome: 'won', closed_by: 'gateway' },
      { amount: 1000, outcome: 'won', closed_by: 'gateway' },
    ]);
    data = await report();
    expect(outcomeOf(outOfOrder.id)).to.equal('won');
    expect(eur()).to.include({ disputed: charged() });
    expect(charged()).to.equal(750);
    await expectOrdersTrue(t);
  });
});
