import { expect } from 'chai';
import {
  type AttemptState,
  cancelStep,
  type ExpiryFacts,
  expiryVerdict,
} from '../../../src/merchant/orders/closure.js';
import {
  type AttemptFacts,
  decide,
  INITIAL_PAYMENT,
  type OrderFacts,
} from '../../../src/merchant/orders/decide.js';
import type { Observation, TransactionFact } from '../../../src/merchant/orders/observation.js';
import { OrderClosed, statusOnNewAttempt } from '../../../src/merchant/orders/status.js';
import { parseOrderTtl } from '../../../src/order-ttl.js';
import { formatDuration, readDuration } from '../../../src/shared/duration.js';

/** Issue 43, part 2: orders that end, and money that reaches them after all. Pure rules. */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const session = (status: string, over: Partial<TransactionFact> = {}): Observation => ({
  source: 'webhook',
  sourceId: `evt_${status}`,
  observedAt: 1,
  transaction: {
    id: '700',
    relatedId: null,
    type: 'sale',
    status,
    amountMinor: 1500,
    currency: 'EUR',
    refundedMinor: 0,
    ...over,
  },
});

const redirect = (status: AttemptFacts['state']['status'] = 'requires_action'): AttemptFacts => ({
  kind: 'redirect',
  sale: true,
  transactionId: '700',
  current: true,
  state: { ...INITIAL_PAYMENT, status },
});

const closedOrder: OrderFacts = {
  status: 'closed',
  amountMinor: 1500,
  currency: 'EUR',
  closedReason: 'cancelled',
};

describe('merchant: orders that end (closure.ts)', () => {
  describe('decide on a closed order', () => {
    it('news without money leaves it closed: an expired session, a void landing late', () => {
      const d = decide(closedOrder, redirect(), session('cancelled'));
      expect(d).to.include({ outcome: 'applied', orderStatus: 'closed', review: null });
      expect(d.attempt.status).to.equal('cancelled');
      const voided = decide(
        closedOrder,
        {
          kind: 'card',
          sale: false,
          transactionId: '700',
          current: true,
          state: { ...INITIAL_PAYMENT, status: 'authorized' },
        },
        session('voided', { type: 'auth' }),
      );
      expect(voided).to.include({ orderStatus: 'closed', review: null });
      // The same news again is a duplicate, and still closed.
      expect(decide(closedOrder, redirect('cancelled'), session('cancelled'))).to.include({
        outcome: 'duplicate',
        orderStatus: 'closed',
      });
    });

    it('money is applied, not lost, and flagged: a session paid at the last second', () => {
      const d = decide(closedOrder, redirect(), session('captured'));
      expect(d.outcome).to.equal('flagged');
      expect(d.orderStatus).to.equal('paid');
      expect(d.attempt).to.include({ status: 'paid', capturedMinor: 1500 });
      expect(d.review).to.equal('paid after the order was closed (cancelled)');
    });

    it('once money won, the usual rules hold: a refund is applied without a new flag', () => {
      const won: OrderFacts = {
        ...closedOrder,
        status: 'paid',
        reviewReason: 'paid after the order was closed (cancelled)',
      };
      const paidAttempt: AttemptFacts = {
        ...redirect(),
        state: { ...INITIAL_PAYMENT, status: 'paid', capturedMinor: 1500 },
      };
      const d = decide(won, paidAttempt, session('refunded', { refundedMinor: 1500 }));
      expect(d).to.include({ outcome: 'applied', orderStatus: 'refunded', review: null });
    });

    it('a person who resolved the flag is not asked again for the same news', () => {
      const resolved = { ...closedOrder, resolvedReasons: 'paid after the order was closed (cancelled)' };
      const d = decide(resolved, redirect(), session('captured'));
      expect(d).to.include({ outcome: 'applied', orderStatus: 'paid', review: null });
    });

    it('an open order is judged as before', () => {
      const open: OrderFacts = { ...closedOrder, status: 'requires_action', closedReason: null };
      expect(decide(open, redirect(), session('captured'))).to.include({
        outcome: 'applied',
        orderStatus: 'paid',
        review: null,
      });
    });
  });

  describe('no attempt after the end', () => {
    it('a payment attempt on a closed order is OrderClosed, naming why; money adopted is taken in', () => {
      expect(() => statusOnNewAttempt({ status: 'closed', closedReason: 'expired' }))
        .to.throw(OrderClosed)
        .with.property('reason', 'expired');
      expect(statusOnNewAttempt({ status: 'closed', closedReason: 'expired' }, true)).to.equal('closed');
      expect(statusOnNewAttempt({ status: 'failed', closedReason: null })).to.equal('pending');
    });
  });

  describe('cancelStep', () => {
    const attempt = (status: AttemptState['status'], atGateway = true): AttemptState => ({
      status,
      atGateway,
      challengeOpen: false,
    });
    const step = (status: ExpiryFacts['status'], a: AttemptState | null, asked = false) =>
      cancelStep({ status, closedReason: status === 'closed' ? 'cancelled' : null }, a, asked);

    it('closed already, paid, authorised, under way at the gateway, or nothing: each its step', () => {
      expect(step('closed', null)).to.equal('already');
      for (const paid of ['paid', 'partially_refunded', 'refunded', 'disputed'] as const)
        expect(step(paid, attempt(paid)), paid).to.equal('paid');
      expect(step('authorized', attempt('authorized'))).to.equal('void');
      expect(step('requires_action', attempt('requires_action'))).to.equal('ask');
      expect(step('requires_action', attempt('requires_action'), true)).to.equal('close');
      expect(step('requires_action', attempt('requires_action', false))).to.equal('close');
      for (const ended of ['pending', 'failed', 'cancelled', 'expired', 'voided'] as const)
        expect(step(ended, ended === 'pending' ? null : attempt(ended)), ended).to.equal('close');
    });
  });

  describe('expiryVerdict (ORDER_TTL)', () => {
    const now = Date.UTC(2026, 10, 30, 12);
    const facts = (over: Partial<ExpiryFacts> = {}): ExpiryFacts => ({
      status: 'pending',
      closedReason: null,
      createdAt: now - 25 * HOUR,
      attempt: null,
      ...over,
    });
    const open = (over: Partial<AttemptState> = {}): AttemptState => ({
      status: 'requires_action',
      atGateway: true,
      challengeOpen: false,
      ...over,
    });

    it('an unpaid order older than the TTL, nothing in flight, closes', () => {
      expect(expiryVerdict(facts(), now, DAY)).to.deep.equal({ kind: 'close' });
      for (const status of ['failed', 'cancelled', 'expired'] as const)
        expect(expiryVerdict(facts({ status, attempt: open({ status }) }), now, DAY), status).to.deep.equal({
          kind: 'close',
        });
    });

    it('kept: off, young, closed, money, a link that holds it', () => {
      const kept = (f: ExpiryFacts, ttl: number | null = DAY) => expiryVerdict(f, now, ttl);
      expect(kept(facts(), null)).to.deep.equal({ kind: 'keep', because: 'off' });
      expect(kept(facts({ createdAt: now - 23 * HOUR }))).to.deep.equal({ kind: 'keep', because: 'young' });
      expect(kept(facts({ status: 'closed', closedReason: 'expired' }))).to.deep.equal({
        kind: 'keep',
        because: 'closed',
      });
      for (const status of ['authorized', 'paid', 'refunded', 'disputed', 'voided'] as const)
        expect(kept(facts({ status })), status).to.deep.equal({ kind: 'keep', because: 'settled' });
      expect(kept(facts({ heldUntil: now + 1 }))).to.deep.equal({ kind: 'keep', because: 'held' });
      expect(kept(facts({ heldUntil: now }))).to.deep.equal({ kind: 'close' });
    });

    it('a payment at the gateway is asked about first; still open once asked, it is in flight', () => {
      const f = facts({ status: 'requires_action', attempt: open() });
      expect(expiryVerdict(f, now, DAY)).to.deep.equal({ kind: 'ask' });
      expect(expiryVerdict(f, now, DAY, true)).to.deep.equal({ kind: 'keep', because: 'in_flight' });
    });

    it('a 3DS challenge holding card data, or an attempt cut off, waits for its own job', () => {
      const challenge = facts({
        status: 'requires_action',
        attempt: open({ atGateway: false, challengeOpen: true }),
      });
      expect(expiryVerdict(challenge, now, DAY)).to.deep.equal({ kind: 'keep', because: 'challenge' });
      const cut = facts({ attempt: open({ status: 'pending', atGateway: false }) });
      expect(expiryVerdict(cut, now, DAY)).to.deep.equal({ kind: 'keep', because: 'unsettled' });
    });
  });

  describe('ORDER_TTL, in the kit duration format', () => {
    it('reads 24h, 7d, 1h30m and off; refuses the rest, naming it', () => {
      expect(parseOrderTtl('24h')).to.deep.equal({ ms: DAY });
      expect(parseOrderTtl('7d')).to.deep.equal({ ms: 7 * DAY });
      expect(parseOrderTtl('1h30m')).to.deep.equal({ ms: 5_400_000 });
      expect(parseOrderTtl('off')).to.deep.equal({ ms: null });
      for (const bad of ['24', '1.5h', 'never', '30s', '366d'])
        expect(parseOrderTtl(bad), bad).to.have.property('problem').that.contains(`"${bad}"`);
    });

    it('the grammar the CLI reads too, and writes back', () => {
      expect(readDuration(' 2h ')).to.equal(7200);
      expect(readDuration('0s')).to.equal(0);
      expect(readDuration('30m1h')).to.equal(null);
      expect(formatDuration(86_400)).to.equal('1d');
    });
  });
});
