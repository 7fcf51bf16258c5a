import { expect } from 'chai';
import type { Transaction } from '../../src/gateway/domain/transactions.js';
import { rows } from './db.js';
import { alnum, newOrder, sandboxCall, stateOf } from './events.js';
import { card } from './gateway.js';
import { getOrder, pressButton, type TestKit } from './kit.js';
import {
  appliedTwice,
  comparison,
  type HistoryLine,
  type OrderColumns,
  type Truth,
  truthOfPayment,
} from './truth-rules.js';

/**
 * The gateway's truth about orders, read from the embedded sandbox's own records (never from the
 * kit), and the two checks every background-work test ends with: each order equals it, and nothing
 * was applied twice.
 */

export type { Truth };

/** What the sandbox says the order's current attempt came to; null when it has nothing there. */
export function truthOf(
  t: TestKit,
  attempt: { kind: string; gateway_transaction_id: string | null; payment_session_id: string | null },
): Truth | null {
  const state = stateOf(t);
  const session = attempt.payment_session_id ? state.sessions.get(attempt.payment_session_id) : undefined;
  const id = session ? session.transactionId : Number(attempt.gateway_transaction_id);
  const txn = state.transactions.get(id);
  if (!txn) return null;
  const capture = [...state.transactions.values()].find(
    (x) => x.type === 'capture' && x.relatedId === txn.id,
  );
  const payment = {
    type: txn.type,
    status: txn.status,
    amount: txn.amount,
    refunded: txn.refundedAmount,
    captureAmount: capture?.amount ?? null,
    captureBefore: txn.captureBefore,
    chargeback: txn.chargebackAmount,
  };
  return truthOfPayment(attempt.kind, payment, session?.status);
}

/**
 * Every order with an attempt at the gateway equals the gateway's truth, and none needs review.
 * `except`: orders a test checks on its own. The rules: truth-rules.ts.
 */
export async function expectOrdersTrue(t: TestKit, except: readonly string[] = []): Promise<number> {
  const orders = await rows(t, 'orders');
  const attempts = new Map((await rows(t, 'payment_attempts')).map((a) => [a.id, a]));
  let checked = 0;
  for (const order of orders) {
    if (except.includes(order.id)) continue;
    const attempt = order.current_attempt_id ? attempts.get(order.current_attempt_id) : undefined;
    const truth = attempt ? truthOf(t, attempt as Parameters<typeof truthOf>[1]) : null;
    if (!truth) continue;
    const { got, want } = comparison(order as OrderColumns, truth);
    expect(got, `order ${order.id} (${order.reference})`).to.deep.equal(want);
    expect(order.needs_review, `order ${order.id}: ${order.review_reason}`).to.equal(0);
    checked += 1;
  }
  return checked;
}

/**
 * Nothing applied twice: no gateway event is applied more than once, whichever way it came (webhook,
 * replay, recovery), and no order moved into the same money state twice.
 */
export async function expectNothingAppliedTwice(t: TestKit): Promise<void> {
  expect(appliedTwice((await rows(t, 'order_history')) as HistoryLine[])).to.deep.equal([]);
}

/** What the story made, and what the gateway did to it behind the kit's back. */
export interface Story {
  orders: string[];
  /** The auth captured at the gateway directly (in full). */
  capturedAtGateway: string;
  /** The redirect session left open, which expires 15 minutes after it was made. */
  abandonedSession: string;
}

async function pay(t: TestKit, id: string, mode: 'sale' | 'auth') {
  const answer = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode } });
  expect(answer.status, answer.text).to.equal(200);
  // The payment's answer is the public view: the operator's shows the transaction.
  return Number((await getOrder(t, id)).payment.gateway_transaction_id);
}

async function redirect(t: TestKit, id: string) {
  const answer = await t.call('POST', `/orders/${id}/pay/redirect`, {
    body: { payment_method: 'ideal', customer: { country_code: 'NL' } },
  });
  expect(answer.status, answer.text).to.equal(200);
  return answer.body.data.next_action.url as string;
}

async function atGateway(t: TestKit, id: number, operation: 'capture' | 'refund' | 'void', amount: number) {
  const answer = await sandboxCall(
    t,
    'POST',
    `/api/v1/transactions/${id}/${operation}`,
    { amount, reason: 'done at the gateway' },
    { 'Idempotency-Key': `idem-${alnum(16)}` },
  );
  expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
}

/**
 * Payments of every kind, each finished by the gateway where the kit can only learn it from an event
 * or a poll: a refund, a capture and a void made at the gateway directly, a redirect paid or
 * cancelled on the hosted page (no landing visited), a chargeback, and a session left to expire.
 */
export async function storyOfPayments(t: TestKit): Promise<Story> {
  const orders: string[] = [];
  const order = async () => {
    const id = await newOrder(t, '20.00');
    orders.push(id);
    return id;
  };
  const refunded = await pay(t, await order(), 'sale');
  await atGateway(t, refunded, 'refund', 7.5);
  const capturedAtGateway = await order();
  await atGateway(t, await pay(t, capturedAtGateway, 'auth'), 'capture', 20);
  await atGateway(t, await pay(t, await order(), 'auth'), 'void', 20);
  await pressButton(await redirect(t, await order()), 'pay');
  await pressButton(await redirect(t, await order()), 'cancel');
  const charged = await pay(t, await order(), 'sale');
  expect((await sandboxCall(t, 'POST', `/sandbox/transactions/${charged}/chargeback`)).status).to.equal(200);
  const abandoned = await redirect(t, await order());
  return { orders, capturedAtGateway, abandonedSession: abandoned.split('/').pop()! };
}

/** Moves both clocks on by `ms` in steps, running what falls due in each (deliveries, retries, expiries). */
export async function passTime(t: TestKit, ms: number, stepMs = 30 * 60_000): Promise<void> {
  for (let left = ms; left > 0; left -= stepMs) {
    t.sandboxClock.advance(Math.min(stepMs, left));
    await t.kit.sandbox!.controls.tick();
  }
}

export type { Transaction };
