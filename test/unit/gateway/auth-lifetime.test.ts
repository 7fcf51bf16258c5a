import { expect } from 'chai';
import {
  captureDeadline,
  LAPSED_REASON,
  lapsed,
  pastDeadline,
} from '../../../src/gateway/domain/auth-lifetime.js';
import {
  type ChildSeed,
  planCapture,
  planVoid,
  type Transaction,
} from '../../../src/gateway/domain/transactions.js';
import { transactionRecord } from '../../support/transaction-record.js';

/** sandbox.md section 11, Authorisation lifetime, as pure rules. */

const T0 = Date.UTC(2026, 10, 1);
const DAY = 24 * 60 * 60 * 1000;
const WEEK = 7 * DAY;

const auth = (overrides: Partial<Transaction> = {}): Transaction =>
  transactionRecord({ captureBefore: T0 + WEEK, ...overrides });

const seedAt = (now: number): ChildSeed => ({ id: 200000, now, acquirerTransId: 'c', acquirerRefNum: 'm' });

describe('authorisation lifetime (pure)', () => {
  it('an approved auth must be captured or voided by its creation plus the lifetime', () => {
    expect(captureDeadline({ type: 'auth', status: 'auth', createdAt: T0 }, WEEK)).to.equal(T0 + WEEK);
    expect(captureDeadline({ type: 'auth', status: 'auth', createdAt: T0 }, 1000)).to.equal(T0 + 1000);
    // An older record of an auth since captured, voided, refunded or charged back was approved too.
    for (const status of ['captured', 'voided', 'refunded', 'chargeback'] as const)
      expect(captureDeadline({ type: 'auth', status, createdAt: T0 }, WEEK), status).to.equal(T0 + WEEK);
  });

  it('every other record has none: a sale, a child record, a declined or risk-cancelled auth', () => {
    for (const type of ['sale', 'capture', 'refund', 'void'] as const)
      expect(captureDeadline({ type, status: 'captured', createdAt: T0 }, WEEK), type).to.equal(null);
    for (const status of ['failed', 'cancelled'] as const)
      expect(captureDeadline({ type: 'auth', status, createdAt: T0 }, WEEK), status).to.equal(null);
  });

  it('lapses at its deadline, not a millisecond before', () => {
    expect(lapsed(auth(), T0 + WEEK - 1)).to.equal(null);
    expect(pastDeadline(auth(), T0 + WEEK - 1)).to.equal(false);
    const cancelled = lapsed(auth(), T0 + WEEK);
    expect(cancelled).to.include({
      status: 'cancelled',
      statusReason: LAPSED_REASON,
      updatedAt: T0 + WEEK,
      captureBefore: T0 + WEEK, // kept on the record for its life
    });
    expect(pastDeadline(auth(), T0 + WEEK)).to.equal(true);
  });

  it('only an open auth lapses: captured, voided, already cancelled ones and records without a deadline do not', () => {
    const later = T0 + 2 * WEEK;
    for (const status of ['captured', 'voided', 'cancelled', 'refunded', 'chargeback'] as const)
      expect(lapsed(auth({ status }), later), status).to.equal(null);
    expect(lapsed(auth({ captureBefore: null }), later)).to.equal(null);
    expect(lapsed(auth({ type: 'sale', status: 'captured' }), later)).to.equal(null);
  });

  it('a capture or void from the deadline on is ERR_INVALID_TRANSACTION, even before the sweep cancelled it', () => {
    const open = auth();
    expect(planCapture(open, 10_000, seedAt(T0 + WEEK - 1)).ok).to.equal(true);
    expect(planVoid(open, 10_000, null, seedAt(T0 + WEEK - 1)).ok).to.equal(true);
    for (const now of [T0 + WEEK, T0 + WEEK + DAY]) {
      const capture = planCapture(open, 10_000, seedAt(now));
      expect(capture).to.include({ ok: false, code: 'ERR_INVALID_TRANSACTION' });
      expect((capture as { message: string }).message).to.include('lapsed');
      expect(planVoid(open, 10_000, null, seedAt(now))).to.include({
        ok: false,
        code: 'ERR_INVALID_TRANSACTION',
      });
    }
  });

  it('a capture record carries no deadline of its own; the captured auth keeps its own', () => {
    const plan = planCapture(auth(), 5000, seedAt(T0 + DAY));
    if (!plan.ok) throw new Error(plan.message);
    expect(plan.created.captureBefore).to.equal(null);
    expect(plan.updated[0]).to.include({ status: 'captured', captureBefore: T0 + WEEK });
  });
});
