import { api, asOperator, type Headers, problem } from './api.js';
import { type ShownOrder, showOrder } from './order.js';
import { $, say } from './page.js';

/** The operator's actions on the order shown: capture, void, refund (an operator's token). */

/**
 * The actions the order shown allows, and what its message line says. Any order gets the panel: its
 * token field is also what shows the order whole. What an action said is about the order it was
 * done to (say's orderId): showing another order clears it, so "refund: done." never stands under an
 * order it was not said of.
 */
export function setOperator(id: string, order: ShownOrder | null): void {
  const ops = $('ops');
  if ($('ops-message').dataset.orderId !== id) say('ops-message', '');
  const status = order?.status;
  const can = {
    capture: status === 'authorized',
    void: status === 'authorized',
    refund: status === 'paid' || status === 'partially_refunded',
  };
  ops.hidden = !order;
  if (order && ops.dataset.orderId !== order.id)
    $<HTMLInputElement>('refund-amount').value = order.amount_formatted;
  ops.dataset.orderId = order ? order.id : '';
  $('capture').hidden = !can.capture;
  $('void').hidden = !can.void;
  $('refund-fields').hidden = !can.refund;
}

interface RefundPress {
  orderId: string;
  amount: number;
  key: string;
}

/**
 * The refund last pressed whose answer was lost: none came, or a 5xx (the kit's OUTCOME_UNKNOWN among
 * them). The refund may be done, so pressed again for the same order and amount it is retried with
 * the same Idempotency-Key, never made twice.
 */
let lostRefund: RefundPress | null = null;

/** A refund press: its order, amount and key; the lost one's again when this press retries it. */
function refundPress(orderId: string, amountText: string): RefundPress {
  const amount = Number(amountText);
  if (lostRefund && lostRefund.orderId === orderId && lostRefund.amount === amount) return lostRefund;
  return { orderId, amount, key: `demo-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}` };
}

export type Action = 'capture' | 'void' | 'refund';

export async function operate(action: Action): Promise<void> {
  const id = $('ops').dataset.orderId ?? '';
  // The token lives in this input only: never stored, so a reload forgets it.
  const operator: Headers | null = asOperator('ops-token');
  if (!operator)
    return say('ops-message', 'Paste the operator token first (npm start prints it).', 'err', id);
  const headers = { ...operator };
  let body = {};
  let refund: RefundPress | null = null;
  if (action === 'refund') {
    const amount = $<HTMLInputElement>('refund-amount').value.trim();
    body = { amount, reason: 'demo shop refund' };
    // One key per answered press: a second press after an answer is a second refund.
    refund = refundPress(id, amount);
    headers['idempotency-key'] = refund.key;
  }
  const answer = await api('POST', `/orders/${encodeURIComponent(id)}/${action}`, body, headers);
  const lost = answer.status === 0 || answer.status >= 500;
  if (refund) lostRefund = lost ? refund : null;
  if (answer.status === 200) say('ops-message', `${action}: done.`, 'ok', id);
  else if (refund && lost)
    say(
      'ops-message',
      `refund: ${problem(answer)}. The refund may or may not be done: pressing Refund again for this amount retries it (the same Idempotency-Key), never a second refund.`,
      'err',
      id,
    );
  else say('ops-message', `${action}: ${problem(answer)}`, 'err', id);
  await showOrder(id, true);
}
