import { formatMoney } from '../../shared/money.js';
import type { Transaction } from './transactions.js';

/**
 * sandbox.md sections 10 and 11: a captured payment is charged back (in full, or for part of what is
 * left after refunds), and a won dispute reverses it. A captured auth and its capture record are one
 * payment: both move, and either id names it.
 */

export type ChargebackRefusal = {
  ok: false;
  /** `state`: 400 ERR_INVALID_TRANSACTION; `amount`: 422 on `errors.amount`. */
  problem: 'state' | 'amount';
  message: string;
};

export type ChargebackPlan = { ok: true; updated: Transaction[]; amount: number } | ChargebackRefusal;

/** The payment `target` belongs to, as the state holds it: the sale or auth, and its capture record if any. */
export interface PaymentFamily {
  target: Transaction;
  payment: Transaction;
  capture: Transaction | undefined;
}

const PAYMENT_TYPES: readonly Transaction['type'][] = ['sale', 'auth', 'capture'];

const wrongState = (what: string, t: Transaction): ChargebackRefusal => ({
  ok: false,
  problem: 'state',
  message: `${what}; this ${t.type} is ${t.status}.`,
});

function moved(f: PaymentFamily, change: Partial<Transaction>): Transaction[] {
  return [f.payment, ...(f.capture ? [f.capture] : [])].map((t) => ({ ...t, ...change }));
}

/** What a chargeback can take: what was captured and not refunded. */
export function chargeableAmount(payment: Transaction): number {
  return payment.capturedAmount - payment.refundedAmount;
}

/**
 * A chargeback of `requested` minor units (undefined: all that is left) on a payment that is
 * `captured`, partly refunded included; a fully refunded one has nothing left to dispute.
 */
export function planChargeback(f: PaymentFamily, requested: number | undefined, now: number): ChargebackPlan {
  if (!PAYMENT_TYPES.includes(f.target.type) || f.payment.status !== 'captured')
    return wrongState('Only a captured payment can be charged back', f.target);
  const left = chargeableAmount(f.payment);
  const amount = requested ?? left;
  if (amount > left) {
    const { currency } = f.payment;
    return {
      ok: false,
      problem: 'amount',
      message: `must be at most ${formatMoney(left, currency)}, what was captured and not refunded`,
    };
  }
  return {
    ok: true,
    amount,
    updated: moved(f, { status: 'chargeback', chargebackAmount: amount, updatedAt: now }),
  };
}

/** The merchant won the dispute: the payment is `captured` again and nothing is charged back. */
export function planChargebackReversal(f: PaymentFamily, now: number): ChargebackPlan {
  if (!PAYMENT_TYPES.includes(f.target.type) || f.payment.status !== 'chargeback')
    return wrongState('Only a charged-back payment can have its chargeback reversed', f.target);
  return {
    ok: true,
    amount: f.payment.chargebackAmount,
    updated: moved(f, { status: 'captured', chargebackAmount: 0, updatedAt: now }),
  };
}
