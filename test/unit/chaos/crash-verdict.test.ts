import { expect } from 'chai';
import {
  answerProblem,
  type CaseResult,
  caseProblems,
  moneyProblems,
  movements,
  truthOf,
} from '../../../chaos/crash-verdict.js';
import type { GatewayRecord } from '../../../chaos/gateway.js';
import type { Answer } from '../../../chaos/shop.js';
import type { OrderRow } from '../../../chaos/tables.js';

/** The crash points judge by these: a harness that misreads the gateway would blame the kit wrongly. */
describe('chaos: the crash points’ verdict', () => {
  const record = (over: Partial<GatewayRecord>): GatewayRecord => ({
    id: 100000,
    merchantId: 1001,
    relatedId: null,
    type: 'sale',
    status: 'captured',
    amount: 1200,
    currency: 'EUR',
    refunded: 0,
    chargeback: 0,
    reference: 'ord-1',
    ...over,
  });
  const answer = (over: Partial<Answer>): Answer => ({
    step: 'pay again',
    status: 200,
    code: '',
    orderStatus: 'paid',
    nextAction: null,
    retryAfter: null,
    ...over,
  });
  const order = (over: Partial<OrderRow>): OrderRow => ({
    id: 'ord_1',
    reference: 'ord-1',
    merchant_id: null,
    status: 'paid',
    captured_minor: 1200,
    refunded_minor: 0,
    needs_review: 0,
    review_reason: null,
    kind: 'card',
    gateway_transaction_id: '100000',
    payment_session_id: null,
    ...over,
  });

  it('counts what moved: approved, open and ended payments apart from their children', () => {
    const m = movements([
      record({ id: 100000, status: 'failed' }),
      record({ id: 100001, type: 'auth', status: 'captured' }),
      record({ id: 100002, relatedId: 100001, type: 'capture' }),
      record({ id: 100003, relatedId: 100001, type: 'refund', status: 'refunded' }),
      record({ id: 100004, status: 'pending' }),
    ]);
    expect(m).to.deep.equal({ approved: 1, open: 1, ended: 1, captures: 1, refunds: 1, voids: 0 });
  });

  it('reads the truth from the payment that holds the reference, with its capture', () => {
    const truth = truthOf('card', [
      record({ id: 100000, status: 'failed' }),
      record({ id: 100001, type: 'auth', status: 'captured', amount: 1200 }),
      record({ id: 100002, relatedId: 100001, type: 'capture', amount: 1000 }),
    ]);
    expect(truth).to.deep.equal({ status: 'paid', captured: 1000, refunded: 0, disputed: 0 });
    expect(truthOf('redirect', [record({ status: 'pending' })])?.status).to.equal('requires_action');
    expect(truthOf('card', [])).to.equal(null);
  });

  it('money moved once per intent: two approved payments, a second refund, a capture not done', () => {
    const two = movements([record({ id: 100000 }), record({ id: 100001 })]);
    expect(moneyProblems(two, 'pay')).to.deep.equal(['2 approved payments for one reference']);
    const none = movements([record({ type: 'auth', status: 'auth' })]);
    expect(moneyProblems(none, 'capture')).to.deep.equal(['the capture never happened at the gateway']);
    const refunds = movements([
      record({}),
      record({ id: 100001, relatedId: 100000, type: 'refund', status: 'refunded' }),
      record({ id: 100002, relatedId: 100000, type: 'refund', status: 'refunded' }),
    ]);
    expect(moneyProblems(refunds, 'refund')).to.deep.equal(['2 refunds at the gateway']);
  });

  it("an operator's charge of a saved card is done exactly once: one approved payment, not none, not two", () => {
    const never = ['the charge never happened at the gateway'];
    expect(moneyProblems(movements([record({})]), 'charge')).to.deep.equal([]);
    expect(moneyProblems(movements([]), 'charge')).to.deep.equal(never);
    expect(moneyProblems(movements([record({ status: 'failed' })]), 'charge')).to.deep.equal(never);
    const twice = movements([record({ id: 100000 }), record({ id: 100001 })]);
    expect(moneyProblems(twice, 'charge')).to.deep.equal(['2 approved payments for one reference']);
    // A shopper's payment may end without one (the retry gave up, the order says so).
    expect(moneyProblems(movements([]), 'pay')).to.deep.equal([]);
  });

  it('takes any answer a correct kit may give to the retry', () => {
    const moved = movements([record({})]);
    const truth = { status: 'paid', captured: 1200, refunded: 0 };
    for (const a of [
      answer({}),
      answer({ status: 202, orderStatus: 'pending' }),
      answer({ orderStatus: 'requires_action', nextAction: 'http://gateway/hosted/checkout/ps_1' }),
      answer({ status: 409, code: 'PAYMENT_IN_PROGRESS', orderStatus: 'pending', retryAfter: '2' }),
      answer({ status: 409, code: 'INVALID_STATE', orderStatus: 'paid' }),
    ])
      expect(answerProblem(a, moved, truth), JSON.stringify(a)).to.equal(null);
  });

  it('refuses a decline or a failed order while money moved or a payment is open, and no answer', () => {
    const moved = movements([record({})]);
    const open = movements([record({ status: 'pending' })]);
    const truth = { status: 'paid', captured: 1200, refunded: 0 };
    const declined = answer({ status: 402, code: 'ERR_DUPLICATE', orderStatus: 'failed' });
    expect(answerProblem(declined, moved, truth)).to.contain('a decline while money moved');
    expect(answerProblem(declined, open, null)).to.contain('while its payment is open at the gateway');
    expect(answerProblem(answer({ step: 'return', orderStatus: 'failed' }), moved, truth)).to.contain(
      'the order shown failed',
    );
    expect(answerProblem(answer({ status: 0 }), moved, truth)).to.equal('pay again: no answer');
    expect(
      answerProblem(
        answer({ status: 409, code: 'PAYMENT_IN_PROGRESS', orderStatus: 'pending' }),
        moved,
        truth,
      ),
    ).to.contain('without Retry-After');
    expect(
      answerProblem(answer({ status: 409, code: 'INVALID_STATE', orderStatus: 'failed' }), moved, truth),
    ).to.be.a('string');
  });

  it('fails a case whose order never equals the truth, or is flagged with nothing wrong', () => {
    const result = (over: Partial<CaseResult>): CaseResult => ({
      name: 'card sale',
      death: 'here',
      intent: 'pay',
      kind: 'card',
      orderId: 'ord_1',
      reference: 'ord-1',
      notReached: null,
      cut: answer({ status: 0 }),
      answers: [answer({})],
      movements: movements([record({})]),
      truth: { status: 'paid', captured: 1200, refunded: 0 },
      order: order({}),
      convergedSeconds: 0,
      ...over,
    });
    expect(caseProblems(result({}))).to.deep.equal([]);
    expect(caseProblems(result({ convergedSeconds: null }))).to.deep.equal([
      'not equal to the truth within the bound',
    ]);
    expect(caseProblems(result({ order: order({ needs_review: 1, review_reason: 'x' }) }))).to.deep.equal([
      'flagged, though nothing is wrong',
    ]);
    // A flag on an order that is wrong is right: only the wrongness is reported.
    const wrong = result({ order: order({ status: 'failed', needs_review: 1 }), convergedSeconds: null });
    expect(caseProblems(wrong)).to.deep.equal(['not equal to the truth within the bound']);
    expect(caseProblems(result({ notReached: 'not reached: x' }))).to.deep.equal(['not reached: x']);
  });
});
