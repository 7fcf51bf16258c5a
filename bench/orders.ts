/**
 * Orders for the bench to pay: each with a card sale attempt the gateway has a transaction for, as
 * the checkout leaves them before the capture event arrives. Written straight into the tables in
 * multi-row INSERTs (thousands in a second or two); the bench measures paying them, not creating them.
 */
import type mysql from 'mysql2/promise';
import { INITIAL_PAYMENT } from '../src/merchant/orders/decide.js';
import { statusOnNewAttempt } from '../src/merchant/orders/status.js';
import type { Target } from './events.js';

let transactions = 500_000_000;

export async function seedOrders(
  db: mysql.Connection,
  referencePrefix: string,
  count: number,
): Promise<Target[]> {
  const now = new Date().toISOString().slice(0, 23).replace('T', ' ');
  const targets: Target[] = [];
  for (let start = 0; start < count; start += 1000) {
    const orders: unknown[][] = [];
    const attempts: unknown[][] = [];
    for (let n = start; n < Math.min(count, start + 1000); n++) {
      const id = `ord_${referencePrefix}_${n}`.slice(0, 32);
      const attemptId = `att_${referencePrefix}_${n}`.slice(0, 32);
      const target = {
        transactionId: String(++transactions),
        reference: `${referencePrefix}-${n}`,
        amountMinor: 1234,
      };
      targets.push(target);
      orders.push([
        id,
        target.reference,
        target.amountMinor,
        'EUR',
        statusOnNewAttempt({ status: 'pending', closedReason: null }),
        attemptId,
        now,
        now,
      ]);
      attempts.push([attemptId, id, 'card', 'sale', target.transactionId, INITIAL_PAYMENT.status, now, now]);
    }
    await db.query(
      'INSERT INTO orders (id, reference, amount_minor, currency, status, current_attempt_id, created_at, updated_at) VALUES ?',
      [orders],
    );
    await db.query(
      'INSERT INTO payment_attempts (id, order_id, kind, mode, gateway_transaction_id, status, created_at, updated_at) VALUES ?',
      [attempts],
    );
  }
  return targets;
}
