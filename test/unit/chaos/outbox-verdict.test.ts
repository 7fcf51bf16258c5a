import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import {
  EVENTLESS,
  judgeOutbox,
  type OutboxEvidence,
  outboxFailures,
} from '../../../chaos/outbox-verdict.js';
import { type Receipt, signedBySpec } from '../../../chaos/shop-endpoint.js';
import type { OrderEventRow } from '../../../chaos/tables.js';

/** The outbox part judges by these: a harness that misreads the receipts would blame the outbox wrongly. */
describe('chaos: the outbox part’s verdict', () => {
  const payload = (type: string, order: string, status: string, at = 0) =>
    JSON.stringify({ type, timestamp: new Date(at).toISOString(), data: { order: { id: order, status } } });
  const row = (seq: number, order: string, type: string, status: string): OrderEventRow => ({
    seq,
    id: `oev_${seq}`,
    order_id: order,
    type,
    payload: payload(type, order, status, seq),
  });
  const receipt = (r: OrderEventRow, at: number, over: Partial<Receipt> = {}): Receipt => ({
    id: r.id,
    body: r.payload,
    at,
    outcome: 'taken',
    library: true,
    spec: true,
    error: null,
    type: r.type,
    orderId: r.order_id,
    orderStatus: null,
    ...over,
  });
  const paid = row(1, 'ord_a', 'order.paid', 'paid');
  const refunded = row(2, 'ord_a', 'order.partially_refunded', 'partially_refunded');
  const other = row(3, 'ord_b', 'order.authorized', 'authorized');
  const rows = [paid, refunded, other];
  const orders = [
    { id: 'ord_a', status: 'partially_refunded' },
    { id: 'ord_b', status: 'authorized' },
  ];
  const evidence = (receipts: Receipt[], over: Partial<OutboxEvidence> = {}): OutboxEvidence => ({
    rows,
    receipts,
    orders,
    backAt: 1000,
    backSeq: 3,
    sandboxAt: (wall) => wall * 60,
    ...over,
  });
  const run = { heldAtKill: 2, leftOver: 0, crashed: 0, convergedSeconds: 12 };

  it('passes when every event is taken, in order per order, refusals and a held take counted apart', () => {
    const look = judgeOutbox(
      evidence([
        receipt(paid, 10, { outcome: 'refused' }),
        receipt(other, 20, { outcome: 'held' }),
        receipt(paid, 1100),
        receipt(other, 1200),
        receipt(refunded, 1500),
      ]),
    );
    expect(look.lost).to.deep.equal([]);
    expect(look.outOfOrder).to.deep.equal([]);
    expect(look.untold).to.deep.equal([]);
    expect(look.outcomes).to.deep.equal({ taken: 3, held: 1, refused: 1, forged: 0 });
    // The held take is the shop's: the one after it is a duplicate with the same id and body.
    expect(look.duplicated).to.deep.equal({ events: 1, receipts: 1 });
    expect(look.byType).to.deep.equal({
      'order.paid': 1,
      'order.partially_refunded': 1,
      'order.authorized': 1,
    });
    expect(look.orders).to.deep.equal({ told: 2, several: 1 });
    // Waiting at the return: paid and refunded (other was held before); the last came 500 ms later.
    expect(look.waiting).to.deep.equal({ events: 2, sandboxSeconds: 30, wallSeconds: 0.5 });
    expect(outboxFailures(look, run)).to.deep.equal([]);
  });

  it('an event never taken is lost, a refusal does not count as taken', () => {
    const look = judgeOutbox(
      evidence([receipt(paid, 10), receipt(other, 20), receipt(refunded, 30, { outcome: 'refused' })]),
    );
    expect(look.lost).to.deep.equal(['oev_2 (order.partially_refunded of ord_a)']);
    expect(outboxFailures(look, run)).to.deep.equal(['1 events lost (never taken by the shop)']);
  });

  it("an order's events first taken out of their order fail, though a later copy of the first is only a duplicate", () => {
    const swapped = judgeOutbox(evidence([receipt(refunded, 10), receipt(paid, 20), receipt(other, 30)]));
    expect(swapped.outOfOrder).to.deep.equal([
      'ord_a: written order.paid, order.partially_refunded; first taken order.partially_refunded, order.paid',
    ]);
    const copied = judgeOutbox(
      evidence([receipt(paid, 10), receipt(refunded, 20), receipt(paid, 30), receipt(other, 40)]),
    );
    expect(copied.outOfOrder).to.deep.equal([]);
    expect(copied.duplicated).to.deep.equal({ events: 1, receipts: 1 });
  });

  it('a request that does not verify, an unknown id and a body not the event’s each fail the run', () => {
    const look = judgeOutbox(
      evidence([
        receipt(paid, 10, {
          library: false,
          error: 'the library: No matching signature found',
          outcome: 'forged',
        }),
        receipt(paid, 11),
        receipt(refunded, 20, { body: payload('order.partially_refunded', 'ord_a', 'refunded') }),
        receipt(other, 30),
        { ...receipt(other, 40), id: 'oev_999' },
      ]),
    );
    expect(look.unverified).to.deep.equal(['oev_1: the library: No matching signature found']);
    expect(look.altered).to.deep.equal(['oev_2 (order.partially_refunded of ord_a)']);
    expect(look.unknown).to.deep.equal(['oev_999 (order.authorized)']);
    expect(look.outcomes.forged).to.equal(1);
    expect(outboxFailures(look, run)).to.deep.equal([
      '1 requests that did not verify',
      '1 requests with an id no event has',
      "1 requests with an event's id and another body",
    ]);
  });

  it('an order whose status no event told fails, unless its status is one no event tells (pending again)', () => {
    const receipts = [receipt(paid, 10), receipt(refunded, 20), receipt(other, 30)];
    const moved = judgeOutbox(
      evidence(receipts, { orders: [{ id: 'ord_a', status: 'refunded' }, orders[1]!] }),
    );
    expect(moved.untold).to.deep.equal([
      'ord_a: refunded, its last event order.partially_refunded (partially_refunded)',
    ]);
    expect(EVENTLESS).to.deep.equal(['pending', 'requires_action']);
    const again = judgeOutbox(
      evidence(receipts, { orders: [orders[0]!, { id: 'ord_b', status: 'pending' }] }),
    );
    expect(again.untold).to.deep.equal([]);
  });

  it('fails on what the run saw too: no delivery in flight at the kill, deliveries left, a death, no convergence', () => {
    const look = judgeOutbox(evidence([receipt(paid, 10), receipt(refunded, 20), receipt(other, 30)]));
    expect(
      outboxFailures(look, { heldAtKill: 0, leftOver: 2, crashed: 1, convergedSeconds: null }),
    ).to.deep.equal([
      'the SIGKILL caught no delivery in flight',
      '2 deliveries the kit still has pending or gave up',
      '1 kit processes died on their own',
      'not every event taken within the bound',
    ]);
    expect(outboxFailures(judgeOutbox(evidence([], { rows: [] })), run)).to.deep.equal([
      'no order events at all',
    ]);
  });

  it("checks a signature by the specification's recipe, as the published library makes it", () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const body = payload('order.paid', 'ord_a', 'paid');
    const at = new Date();
    const headers = {
      'webhook-id': 'oev_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('oev_1', at, body),
    };
    expect(signedBySpec(secret, headers, body)).to.equal(true);
    // Among several signatures (a rotation), one that matches is enough.
    expect(
      signedBySpec(
        secret,
        { ...headers, 'webhook-signature': `v1,AAAA ${headers['webhook-signature']}` },
        body,
      ),
    ).to.equal(true);
    expect(signedBySpec(secret, headers, `${body} `)).to.equal(false);
    expect(signedBySpec(secret, { ...headers, 'webhook-id': 'oev_2' }, body)).to.equal(false);
    expect(signedBySpec(`whsec_${randomBytes(32).toString('base64')}`, headers, body)).to.equal(false);
    expect(signedBySpec(secret, { ...headers, 'webhook-signature': '' }, body)).to.equal(false);
  });
});
