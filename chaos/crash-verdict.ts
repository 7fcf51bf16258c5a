import { comparison, sameTruth, type Truth, truthOfPayment } from '../test/support/truth-rules.js';
import type { Intent } from './crash-cases.js';
import type { GatewayRecord } from './gateway.js';
import type { Answer } from './shop.js';
import type { OrderRow } from './tables.js';

/**
 * A crash point's verdict, from the gateway's records of the order's reference (never from what the
 * kit says of itself): money moved once per intent, the kit's order equals the gateway's truth, no
 * flag without a cause, and no answer that tells the shopper "declined" or "failed" while money
 * moved. Plain functions of records.
 */

/** The gateway's records of one reference, counted. */
export interface Movements {
  /** Sales and auths that hold money or its promise (approved, whatever happened to them after). */
  approved: number;
  /** Sales and auths still pending (a payment session's, before it is settled). */
  open: number;
  /** Sales and auths declined, failed or cancelled. */
  ended: number;
  captures: number;
  refunds: number;
  voids: number;
}

const isPayment = (r: GatewayRecord) => r.relatedId === null && (r.type === 'sale' || r.type === 'auth');
const HOLDS_NOTHING = new Set(['failed', 'cancelled']);

export function movements(records: readonly GatewayRecord[]): Movements {
  const payments = records.filter(isPayment);
  const count = (type: string) => records.filter((r) => r.relatedId !== null && r.type === type).length;
  return {
    approved: payments.filter((r) => r.status !== 'pending' && !HOLDS_NOTHING.has(r.status)).length,
    open: payments.filter((r) => r.status === 'pending').length,
    ended: payments.filter((r) => HOLDS_NOTHING.has(r.status)).length,
    captures: count('capture'),
    refunds: count('refund'),
    voids: count('void'),
  };
}

/** Whether money moved (or is held) at the gateway for the reference. */
export const moneyMoved = (m: Movements) => m.approved > 0;

/**
 * What breaks "once per intent": two approved payments for one reference, a second capture or void,
 * more refunds than the case's one Idempotency-Key; and an operator's intent (a charge among them) not
 * done exactly once.
 */
export function moneyProblems(m: Movements, intent: Intent): string[] {
  const out: string[] = [];
  if (m.approved > 1) out.push(`${m.approved} approved payments for one reference`);
  else if (intent === 'charge' && m.approved === 0) out.push('the charge never happened at the gateway');
  const want = { capture: 0, refund: 0, void: 0 };
  if (intent !== 'pay' && intent !== 'charge') want[intent] = 1;
  const done = { capture: m.captures, refund: m.refunds, void: m.voids };
  for (const op of ['capture', 'refund', 'void'] as const) {
    if (done[op] > want[op]) out.push(`${done[op]} ${op}s at the gateway`);
    else if (done[op] < want[op]) out.push(`the ${op} never happened at the gateway`);
  }
  return out;
}

/**
 * What the order should show: the payment that holds the reference (or the last one), as
 * test/support/truth-rules.ts reads it; null when the gateway has no payment for it.
 */
export function truthOf(kind: 'card' | 'redirect', records: readonly GatewayRecord[]): Truth | null {
  const payments = records.filter(isPayment);
  const payment = payments.filter((r) => !HOLDS_NOTHING.has(r.status)).at(-1) ?? payments.at(-1);
  if (!payment) return null;
  const capture = records.find((r) => r.type === 'capture' && r.relatedId === payment.id);
  return truthOfPayment(kind, { ...payment, captureAmount: capture?.amount ?? null });
}

/** Statuses of an order that holds no money: what it may show when the gateway has no payment. */
const NO_MONEY = new Set(['pending', 'requires_action', 'failed', 'cancelled', 'expired']);

/** Whether the order equals the truth (money compared in the states that have it). */
export function orderIsTrue(order: OrderRow, truth: Truth | null): boolean {
  if (truth === null) return NO_MONEY.has(order.status);
  const { got, want } = comparison(order, truth);
  return sameTruth(got, want);
}

/**
 * What is wrong with an answer the shopper or operator got after the crash; null: nothing. Right
 * answers: 200 (the order as it stands, or the page to go on to), 202 (not known yet), 409
 * PAYMENT_IN_PROGRESS with Retry-After, and a 409 INVALID_STATE that shows the order already where
 * the gateway's truth says (nothing to pay: it is paid). Wrong: no answer; a 402, or the order shown
 * `failed`, while money moved or a payment is still open at the gateway; anything else.
 */
export function answerProblem(a: Answer, m: Movements, truth: Truth | null): string | null {
  const said = `${a.step}: ${a.status}${a.code ? ` ${a.code}` : ''}`;
  if (a.status === 0) return `${a.step}: no answer`;
  const standing = moneyMoved(m) ? 'money moved' : m.open > 0 ? 'its payment is open at the gateway' : null;
  if (standing && a.status === 402) return `${said}, a decline while ${standing}`;
  if (standing && a.orderStatus === 'failed') return `${said}, the order shown failed while ${standing}`;
  if ([200, 201, 202].includes(a.status)) return null;
  if (a.status === 409 && a.code === 'PAYMENT_IN_PROGRESS')
    return a.retryAfter === null ? `${said} without Retry-After` : null;
  if (a.status === 409 && a.code === 'INVALID_STATE' && truth !== null && a.orderStatus === truth.status)
    return null;
  return `${said}, not an answer a retry should get`;
}

/** One case's run and what was read after it. */
export interface CaseResult {
  name: string;
  death: string;
  intent: Intent;
  kind: 'card' | 'redirect';
  /** Null until the order is read (a charge's is made by the case's act). */
  orderId: string | null;
  /** Null when the set-up broke off before the case had an order. */
  reference: string | null;
  /** Null: the api died where the case says; else why the case never got there. */
  notReached: string | null;
  /** The request the api died in: it should have been cut off. */
  cut: Answer | null;
  answers: Answer[];
  movements: Movements | null;
  truth: Truth | null;
  order: OrderRow | null;
  /** Seconds from the retry's last answer until the order first equalled the truth; null: not within the bound. */
  convergedSeconds: number | null;
}

/** Why the case fails; empty when it passes. */
export function caseProblems(r: CaseResult): string[] {
  if (r.notReached !== null) return [r.notReached];
  if (!r.movements || !r.order) return ['not read'];
  const money = moneyProblems(r.movements, r.intent);
  const out = [...money];
  for (const a of r.answers) {
    const problem = answerProblem(a, r.movements, r.truth);
    if (problem) out.push(problem);
  }
  const isTrue = orderIsTrue(r.order, r.truth);
  if (r.convergedSeconds === null) out.push('not equal to the truth within the bound');
  else if (!isTrue) out.push('equal to the truth once, not at the end');
  // A flag belongs on an order that is wrong: money that did not move once, or an order off the truth.
  if (Number(r.order.needs_review) === 1 && money.length === 0 && isTrue)
    out.push('flagged, though nothing is wrong');
  return out;
}
