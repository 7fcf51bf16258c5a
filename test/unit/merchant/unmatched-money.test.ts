import { expect } from 'chai';
import { KitMetrics, type MetricSources } from '../../../src/infra/metrics.js';
import { decide, INITIAL_PAYMENT } from '../../../src/merchant/orders/decide.js';
import { observeFinding, observeTransaction } from '../../../src/merchant/orders/from-gateway.js';
import type { TransactionFact } from '../../../src/merchant/orders/observation.js';
import {
  isMoneyWithNoAttempt,
  noAttemptReason,
  supersedes,
} from '../../../src/merchant/orders/unmatched-money.js';

/** issue 19, part 1: gateway money with no order, the pure rules and views. */

const fact = (over: Partial<TransactionFact> = {}): TransactionFact => ({
  id: '100123',
  relatedId: null,
  type: 'sale',
  status: 'captured',
  amountMinor: 100,
  currency: 'EUR',
  refundedMinor: 0,
  reference: 'shop-1',
  ...over,
});

describe('merchant: gateway money with no order', () => {
  it('is a transaction record found by its ids; not a finding, not an answer about an attempt', () => {
    const about = { orderId: 'ord_1', attemptId: 'att_1' };
    expect(
      isMoneyWithNoAttempt({ source: 'webhook', sourceId: 'evt_1', observedAt: 1, transaction: fact() }),
    ).to.equal(true);
    expect(
      isMoneyWithNoAttempt({ source: 'poll', sourceId: 'p', observedAt: 1, transaction: fact(), about }),
    ).to.equal(false);
    expect(isMoneyWithNoAttempt(observeFinding(about, { review: 'x' }, 's', 1))).to.equal(false);
  });

  it('flags its order with a reason that names the transaction, its status and its amount', () => {
    expect(noAttemptReason(fact())).to.equal(
      'gateway money with no attempt: transaction 100123 captured 1.00 EUR',
    );
    expect(
      noAttemptReason(
        fact({ id: '100124', relatedId: '100123', type: 'refund', status: 'refunded', amountMinor: 50 }),
      ),
    ).to.equal('gateway money with no attempt: transaction 100124 (refund of 100123) refunded 0.50 EUR');
    expect(noAttemptReason(fact({ currency: 'JPY', amountMinor: 500 }))).to.contain('captured 500 JPY');
    expect(noAttemptReason(fact({ currency: 'XYZ', amountMinor: 7 }))).to.contain('7 (minor units) XYZ');
  });

  it('the flag is a review finding: decide flags once per reason, whatever its source', () => {
    const about = { orderId: 'ord_1', attemptId: 'att_1' };
    const reason = noAttemptReason(fact());
    const finding = observeFinding(about, { review: reason }, 'evt_1', 1, 'webhook');
    expect(finding.source).to.equal('webhook');
    const order = { status: 'paid' as const, amountMinor: 100, currency: 'EUR' };
    const attempt = {
      kind: 'card' as const,
      sale: true,
      transactionId: '99',
      current: true,
      state: { ...INITIAL_PAYMENT, status: 'paid' as const, capturedMinor: 100 },
    };
    const first = decide(order, attempt, finding);
    expect(first).to.include({ outcome: 'flagged', review: reason, orderStatus: 'paid' });
    expect(decide({ ...order, reviewReason: reason }, attempt, finding).outcome).to.equal('duplicate');
  });

  it('keeps the furthest news of a transaction: older statuses and smaller refund totals do not replace it', () => {
    const at = (status: string, refundedMinor = 0) => ({ status, refundedMinor });
    expect(supersedes(at('auth'), at('captured'))).to.equal(true);
    expect(supersedes(at('captured'), at('captured'))).to.equal(true);
    expect(supersedes(at('captured'), at('pending'))).to.equal(false);
    expect(supersedes(at('captured'), at('auth'))).to.equal(false);
    expect(supersedes(at('captured', 30), at('captured', 50))).to.equal(true);
    expect(supersedes(at('captured', 50), at('captured', 30))).to.equal(false);
    expect(supersedes(at('refunded', 100), at('captured', 0))).to.equal(false);
    expect(supersedes(at('refunded', 100), at('chargeback', 100))).to.equal(true);
    expect(supersedes(at('captured'), at('settled')), 'a status we do not know is the last word').to.equal(
      true,
    );
  });

  it('metrics: a counter of transactions first seen, and a gauge of open money read when scraped', async () => {
    const metrics = new KitMetrics();
    let open: Record<string, number> = { EUR: 2, USD: 1 };
    metrics.watch({ unmatchedOpen: async () => open } as Partial<MetricSources> as MetricSources);
    metrics.unmatchedMoney('EUR');
    metrics.unmatchedMoney('EUR');
    let scrape = await metrics.text();
    expect(scrape).to.match(/^kit_unmatched_money_total\{currency="EUR"\} 2$/m);
    expect(scrape).to.match(/^kit_unmatched_money_open\{currency="EUR"\} 2$/m);
    expect(scrape).to.match(/^kit_unmatched_money_open\{currency="USD"\} 1$/m);
    open = { EUR: 1 };
    scrape = await metrics.text();
    expect(scrape).to.match(/^kit_unmatched_money_open\{currency="EUR"\} 1$/m);
    expect(scrape, 'a currency with nothing open any more is not stuck at its last count').to.not.contain(
      'kit_unmatched_money_open{currency="USD"}',
    );
  });

  it('an event payload read for the reconciler carries what the row keeps', () => {
    const obs = observeTransaction(
      {
        id: '100123',
        related_trans_id: null,
        amount: 100,
        currency: 'EUR',
        status: 'captured',
        transaction_type: 'sale',
        merchant_trans_id: 'shop-1',
        refunded_amount: 0,
      },
      'webhook',
      'evt_1',
      1,
    );
    expect(isMoneyWithNoAttempt(obs)).to.equal(true);
    expect(obs.transaction).to.include({
      id: '100123',
      reference: 'shop-1',
      amountMinor: 100,
      currency: 'EUR',
    });
  });
});
