import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import { REPORT_COLUMNS } from '../../../src/merchant/reports/reconciliation.js';
import { referenceSettled, stateOf } from '../../support/events.js';
import { card, MERCHANT_KEY } from '../../support/gateway.js';
import { getOrder, startTestKit, type TestKit } from '../../support/kit.js';
import { expectOrdersTrue } from '../../support/truth.js';

/**
 * Issue 19, part 2: a dispute record per chargeback (amount, opened, closed, outcome), the order
 * disputed with what the chargeback took, paid again when the gateway reverses it (won), a loss an
 * operator records, a refund of a disputed order refused, and the report's disputed amounts and net
 * after chargebacks, equal to the sandbox's own records.
 */
const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('merchant: disputes (issue 19, part 2)', function () {
  this.timeout(60_000);
  let t: TestKit;
  let range: string;
  before(async () => {
    t = await startTestKit();
    const today = Math.floor(t.clock.now() / DAY) * DAY;
    range = `from=${dayOf(today)}&to=${dayOf(today + DAY)}`;
  });
  after(async () => {
    await t?.close();
  });

  const control = async (path: string, body: unknown = {}) => {
    t.sandboxClock.advance(1000); // each step later by the gateway's clock, as in life
    const res = await fetch(`${t.kit.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
  };
  /** A paid card sale: the order's id, reference and gateway transaction. */
  const paidOrder = async (amount: string, currency = 'EUR') => {
    const created = await t.call('POST', '/orders', { body: { amount, currency } });
    expect(created.status, created.text).to.equal(201);
    const { id, reference } = created.body.data.order as { id: string; reference: string };
    const paid = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
    expect(paid.status, paid.text).to.equal(200);
    const transaction = (await getOrder(t, id)).payment.gateway_transaction_id as string;
    return { id, reference, transaction };
  };
  const refund = (id: string, amount: string) =>
    t.call('POST', `/orders/${id}/refund`, {
      ops: true,
      body: { amount, reason: 'customer asked' },
      headers: { 'idempotency-key': `refund-${id}-${amount}` },
    });
  // biome-ignore lint/suspicious/noExplicitAny: answers of every shape
  const report = async (): Promise<any> => {
    const answer = await t.call('GET', `/reports/reconciliation?${range}`, { ops: true });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.data;
  };
  const metric = async (currency: string) => {
    const line = (await t.call('GET', '/metrics')).text
      .split('\n')
      .find((l) => l.startsWith(`kit_disputes_open{currency="${currency}"} `));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };

  it('a partial chargeback: disputed with its amount and an open dispute; a refund is 409 ORDER_DISPUTED; the reversal makes it paid again with the dispute won', async () => {
    const { id, reference, transaction } = await paidOrder('30.00');
    expect((await refund(id, '5.00')).status).to.equal(200);

    await control(`/sandbox/transactions/${transaction}/chargeback`, { amount: 10 });
    await referenceSettled(t, reference);
    let order = await getOrder(t, id);
    expect(order).to.include({
      status: 'disputed',
      captured_amount: 3000,
      refunded_amount: 500,
      disputed_amount: 1000,
      disputed_amount_formatted: '10.00',
      needs_review: false,
    });
    expect(order.disputes).to.have.length(1);
    const opened = order.disputes[0];
    expect(opened).to.include({
      order_id: id,
      gateway_transaction_id: transaction,
      amount: 1000,
      amount_formatted: '10.00',
      currency: 'EUR',
      outcome: 'open',
      closed_at: null,
    });
    const record = stateOf(t).transactions.get(Number(transaction))!;
    expect(opened.opened_at, "the chargeback's time at the gateway").to.equal(
      new Date(record.updatedAt).toISOString(),
    );
    expect(await metric('EUR')).to.equal(1);

    // The bank took the money back already: a refund now would pay the customer twice.
    const refused = await refund(id, '1.00');
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.code).to.equal('ORDER_DISPUTED');
    expect(refused.body.message).to.contain('10.00 EUR');
    expect(refused.body.data).to.deep.equal({ status: 'disputed', disputed_amount: 1000 });
    expect(stateOf(t).transactions.get(Number(transaction))!.refundedAmount, 'nothing refunded').to.equal(
      500,
    );

    await control(`/sandbox/transactions/${transaction}/chargeback/reverse`);
    await referenceSettled(t, reference);
    order = await getOrder(t, id);
    expect(order).to.include({
      status: 'partially_refunded',
      refunded_amount: 500,
      disputed_amount: 0,
      needs_review: false,
    });
    expect(order.disputes).to.have.length(1);
    expect(order.disputes[0]).to.include({
      id: opened.id,
      outcome: 'won',
      closed_by: 'gateway',
      amount: 1000,
    });
    expect(order.disputes[0].closed_at).to.not.equal(null);
    expect(await metric('EUR')).to.equal(0);
    // Paid again: refundable again.
    expect((await refund(id, '1.00')).status).to.equal(200);
    await expectOrdersTrue(t);
  });

  it('charged back again after a reversal: a second dispute, with the new amount', async () => {
    const { id, reference, transaction } = await paidOrder('20.00');
    // Each applied before the next here; out of order, the same records (dispute-arrival.test.ts).
    await control(`/sandbox/transactions/${transaction}/chargeback`);
    await referenceSettled(t, reference);
    await control(`/sandbox/transactions/${transaction}/chargeback/reverse`);
    await referenceSettled(t, reference);
    await control(`/sandbox/transactions/${transaction}/chargeback`, { amount: 7.5 });
    await referenceSettled(t, reference);
    const order = await getOrder(t, id);
    expect(order).to.include({ status: 'disputed', disputed_amount: 750 });
    expect(
      order.disputes.map((d: { outcome: string; amount: number }) => [d.outcome, d.amount]),
    ).to.deep.equal([
      ['open', 750],
      ['won', 2000],
    ]);
  });

  it('an operator records a dispute lost: the order stays disputed, its history says who and why; again is 409; a wrong id 404; no note 422', async () => {
    const { id, reference, transaction } = await paidOrder('12.00', 'USD');
    await control(`/sandbox/transactions/${transaction}/chargeback`);
    await referenceSettled(t, reference);
    const [dispute] = (await getOrder(t, id)).disputes;
    expect(dispute).to.include({ outcome: 'open', amount: 1200, currency: 'USD' });

    const lose = (disputeId: string, body: unknown, ops = true) =>
      t.call('POST', `/disputes/${disputeId}/lost`, { ops, body });
    expect((await lose(dispute.id, { note: 'x' }, false)).status).to.equal(401);
    const noNote = await lose(dispute.id, {});
    expect(noNote.status).to.equal(422);
    expect(noNote.body.errors).to.have.property('note');
    expect((await lose('dsp_nobody', { note: 'x' })).status).to.equal(404);

    const lost = await lose(dispute.id, { note: 'the issuer ruled for the cardholder', by: 'admin' });
    expect(lost.status, lost.text).to.equal(200);
    expect(lost.body.data.dispute).to.include({
      id: dispute.id,
      outcome: 'lost',
      closed_by: 'admin',
      note: 'the issuer ruled for the cardholder',
    });
    const order = await getOrder(t, id);
    expect(order).to.include({ status: 'disputed', disputed_amount: 1200 });
    const line = order.history.find(
      (h: { source_id: string }) => h.source_id === `dispute:${dispute.id}:lost`,
    );
    expect(line).to.include({ status_before: 'disputed', status_after: 'disputed' });
    expect(line.detail).to.contain('admin').and.to.contain('the issuer ruled for the cardholder');

    const again = await lose(dispute.id, { note: 'twice' });
    expect(again.status).to.equal(409);
    expect(again.body.data).to.deep.equal({ outcome: 'lost', allowed: ['open'] });

    const listed = await t.call('GET', '/disputes?outcome=lost', { ops: true });
    expect(listed.status).to.equal(200);
    expect(listed.body.data.disputes.map((d: { id: string }) => d.id)).to.deep.equal([dispute.id]);
    expect((await t.call('GET', '/disputes?outcome=maybe', { ops: true })).status).to.equal(422);
  });

  it("the report: disputed amounts, the dispute's outcome, and a net after chargebacks equal to the sandbox's own records, in every currency; the CSV carries the columns", async () => {
    const data = await report();
    const rows = data.rows as Record<string, unknown>[];
    const disputed = rows.filter((r) => r.status === 'disputed');
    expect(disputed.map((r) => r.dispute_outcome).sort()).to.deep.equal(['lost', 'open']);
    expect(rows.find((r) => r.dispute_outcome === 'won')).to.include({
      status: 'partially_refunded',
      disputed_amount: 0,
    });

    // The gateway's side: over the payments of these orders, what was captured, refunded and charged back.
    const references = new Set(rows.map((r) => r.reference));
    const want = new Map<string, { captured: number; refunded: number; disputed: number }>();
    for (const tx of stateOf(t).transactions.values()) {
      if (tx.type !== 'sale' || !references.has(tx.reference)) continue;
      const sums = want.get(tx.currency) ?? { captured: 0, refunded: 0, disputed: 0 };
      sums.captured += tx.amount;
      sums.refunded += tx.refundedAmount;
      sums.disputed += tx.chargebackAmount;
      want.set(tx.currency, sums);
    }
    expect(want.size).to.equal(2);
    for (const [currency, sums] of want) {
      const totals = data.totals.find((x: { currency: string }) => x.currency === currency);
      expect(totals, currency).to.include(sums);
      expect(totals.net, currency).to.equal(sums.captured - sums.refunded - sums.disputed);
    }
    const eur = data.totals.find((x: { currency: string }) => x.currency === 'EUR');
    // 30.00 - 6.00 refunded (the dispute won) + 20.00 - 7.50 charged back again.
    expect(eur).to.include({
      captured: 5000,
      refunded: 600,
      disputed: 750,
      net: 3650,
      net_formatted: '36.50',
    });

    const csv = await t.call('GET', `/reports/reconciliation?${range}&format=csv`, { ops: true });
    expect(csv.status).to.equal(200);
    expect(csv.text.split('\n')[0]).to.equal(REPORT_COLUMNS.join(','));
    expect(REPORT_COLUMNS).to.include.members([
      'disputed_amount',
      'disputed_amount_formatted',
      'dispute_outcome',
    ]);
    const parsed = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    const lost = parsed.find((r) => r.dispute_outcome === 'lost')!;
    expect(lost).to.include({
      status: 'disputed',
      disputed_amount: '1200',
      disputed_amount_formatted: '12.00',
    });
    await expectOrdersTrue(t);
  });
});
