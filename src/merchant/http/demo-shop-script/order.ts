import type { OrderWithHistory, PublicOrder } from '@merchant-kit/client';
import { api, asOperator, asShopper, problem } from './api.js';
import { $, el, SETTINGS, SEVERAL_MERCHANTS, say } from './page.js';
import { forgetLast, ownMerchant, paying, secretOf } from './storage.js';

/**
 * The order as the kit knows it (GET /orders/{id}): to a shopper its status and amounts (with the
 * order's secret), to an operator the whole order and its history, read again while it is being
 * confirmed.
 */

/** An order as a read shows it: the shopper's view, or (an operator's token) the whole order. */
export type ShownOrder = PublicOrder | OrderWithHistory;

let timer: ReturnType<typeof setTimeout> | undefined;
let refreshes = 0;
let shownId: string | null = null;
/** Only the latest read is shown: an older answer arriving late does not replace it. */
let reads = 0;
/** The order shown, as last read: a saved card pays it when it is still the customer's to pay. */
let shownOrder: ShownOrder | null = null;

/** The id of the order shown (or being read); null before any. */
export const currentOrderId = (): string | null => shownId;
/** The order shown, as last read; null when none is (none yet, or none by the id asked). */
export const currentOrder = (): ShownOrder | null => shownOrder;

/** Told of each read shown: the order, or null when the kit knows none by `id`. */
type Listener = (id: string, order: ShownOrder | null) => void;
const listeners: Listener[] = [];

/** What else on the page follows the order shown (the pay button's label, the operator's actions). */
export function onOrderShown(listener: Listener): void {
  listeners.push(listener);
}

/**
 * Whether the gateway holds a payment of the order: the operator's view names it; for the public one
 * the page goes by the payments it sent (an order placed elsewhere and still pending: none known).
 */
function paymentStarted(order: ShownOrder): boolean {
  if ('payment' in order) return order.payment !== null;
  if (order.status !== 'pending') return true;
  return paying(order.id);
}

/**
 * The order as GET /orders/{id} shows it: to the shopper its status and amounts; with the operator
 * token typed in, the whole order and its history. A token the kit refuses is said, beside it.
 */
export async function showOrder(id: string, fresh: boolean): Promise<void> {
  clearTimeout(timer);
  if (fresh || id !== shownId) refreshes = 0;
  shownId = id;
  const read = ++reads;
  const path = `/orders/${encodeURIComponent(id)}`;
  const operator = asOperator('ops-token');
  let answer = await api<{ order: ShownOrder }>('GET', path, undefined, operator || asShopper(id));
  if (operator && (answer.status === 401 || answer.status === 403) && read === reads) {
    say('ops-message', `The order is shown as a shopper sees it: ${problem(answer)}`, 'err', id);
    answer = await api('GET', path, undefined, asShopper(id));
  }
  if (read !== reads) return;
  const box = $('order');
  if (answer.status === 404) {
    forgetLast();
    // Without its secret (an order placed in another browser, a link from the review queue) the kit
    // says only that there is no such order: an operator's token shows it.
    const secretHeld = secretOf(id) !== null;
    box.replaceChildren(
      el(
        'p',
        { class: 'hint', id: 'order-unknown' },
        secretHeld || operator
          ? `The last order (${id}) is not known to this kit any more. Place a new one.`
          : `The order ${id} was not placed in this browser: the kit shows an order to whoever holds its client secret (POST /orders answers it), or to an operator. Type a token under Operator actions to see it, or place a new one.`,
      ),
    );
    shownOrder = null;
    for (const listener of listeners) listener(id, null);
    // Its token field stays: an operator's token shows an order this browser holds no secret of.
    if (!secretHeld && !operator) $('ops').hidden = false;
    return;
  }
  const order = answer.body.data?.order;
  if (answer.status !== 200 || !order) {
    box.replaceChildren(el('p', { class: 'message err' }, `Could not load the order: ${problem(answer)}`));
    // A kit that did not answer (restarting, say) is asked again, as an order being confirmed is.
    if ((answer.status === 0 || answer.status >= 500) && refreshes < SETTINGS.maxRefreshes) {
      refreshes += 1;
      timer = setTimeout(() => showOrder(id, false), SETTINGS.refreshMs);
    }
    return;
  }
  shownOrder = order;
  // An order without a payment attempt (one the gateway refused outright) has nothing to confirm.
  const waiting = SETTINGS.waiting.includes(order.status) && paymentStarted(order);
  box.replaceChildren(renderOrder(order, waiting));
  for (const listener of listeners) listener(id, order);
  if (waiting && refreshes < SETTINGS.maxRefreshes) {
    refreshes += 1;
    timer = setTimeout(() => showOrder(id, false), SETTINGS.refreshMs);
  }
}

/** The customer an order names, in one line (the operator's view only). */
function customerText(c: OrderWithHistory['customer']): string | null {
  if (!c) return null;
  if ('erased' in c) return `erased ${c.erased_at}`;
  const name = [c.first_name, c.last_name].filter(Boolean).join(' ');
  return [c.merchant_customer_id, name, c.email].filter(Boolean).join(', ');
}

const TONES: Partial<Record<ShownOrder['status'], 'good' | 'wait' | 'bad'>> = {
  paid: 'good',
  authorized: 'good',
  pending: 'wait',
  requires_action: 'wait',
  failed: 'bad',
  cancelled: 'bad',
  expired: 'bad',
  closed: 'bad',
};

type Row = [term: string, value: string | null | undefined];

function renderOrder(order: ShownOrder, waiting: boolean): HTMLElement {
  const money = (formatted: string | null) => (formatted === null ? null : `${formatted} ${order.currency}`);
  // The operator's view (a token that may read): the whole order, with its history.
  const whole = 'history' in order ? order : null;
  // Platform mode: whose order; the shopper's view does not say, the page remembers the orders it placed.
  const merchant = SEVERAL_MERCHANTS
    ? (('merchant_id' in order ? order.merchant_id : null) ?? ownMerchant(order.id))
    : null;
  const rows: Row[] = [
    ['Merchant', merchant === null ? null : String(merchant)],
    ['Order', order.id],
    ['Reference', order.reference],
    ['Amount', money(order.amount_formatted)],
    ['Captured', money(order.captured_amount_formatted)],
    ['Refunded', order.refunded_amount ? money(order.refunded_amount_formatted) : null],
    ['Charged back', order.disputed_amount ? money(order.disputed_amount_formatted) : null],
  ];
  if (whole) {
    const p = whole.payment;
    rows.push(
      ['Customer', customerText(whole.customer)],
      ['Description', whole.description],
      ['Payment', p ? [p.kind, p.mode, p.payment_method].filter(Boolean).join(', ') : 'none yet'],
      ['Gateway transaction', p?.gateway_transaction_id],
      ['Payment session', p?.payment_session_id],
      ['Failure', whole.failure_code],
      // An authorisation lapses unless captured or voided by then.
      ['Capture before', whole.capture_before && new Date(whole.capture_before).toUTCString()],
      ['Needs review', whole.needs_review ? whole.review_reason || 'yes' : null],
    );
  }
  const dl = el('dl');
  for (const [term, value] of rows) {
    if (value === null || value === undefined || value === '') continue;
    dl.append(el('dt', {}, term), el('dd', {}, value));
  }
  const status = el(
    'p',
    { class: 'status' },
    el('span', { class: `badge tone-${TONES[order.status] || 'info'}`, id: 'order-status' }, order.status),
    waiting
      ? el(
          'span',
          { class: 'hint' },
          refreshes < SETTINGS.maxRefreshes
            ? ` being confirmed: checking again every ${SETTINGS.refreshMs / 1000} s`
            : ' still being confirmed',
        )
      : null,
  );
  const again =
    waiting && refreshes >= SETTINGS.maxRefreshes
      ? el('button', { type: 'button', id: 'check-again' }, 'Check again')
      : null;
  again?.addEventListener('click', () => showOrder(order.id, true));
  // A shopper who came back before finishing the challenge or the hosted checkout: its page again.
  const next = 'next_action' in order ? order.next_action : null;
  const resume =
    next && next.type === 'redirect' && /^https?:/.test(next.url)
      ? el('p', {}, el('a', { href: next.url, id: 'continue-payment' }, 'Continue the payment'))
      : null;
  // A link would send no header: the order's JSON is for a request that carries its secret or a token.
  const json = el(
    'p',
    { class: 'hint' },
    'The same as JSON: ',
    el('code', {}, `GET /orders/${order.id}`),
    whole ? ' with the operator token' : ` with its ${SETTINGS.secretHeader} header`,
  );
  const shown = {
    class: 'order',
    'data-status': order.status,
    'data-order-id': order.id,
    'data-merchant-id': merchant === null ? null : String(merchant),
  };
  // The public view ends with a hint; an operator's, with the order's history.
  const rest = whole
    ? historyParts(whole)
    : [
        el(
          'p',
          { class: 'hint', id: 'order-whole-hint' },
          "Who pays, the payment's ids and the history are for operators: type a token under Operator actions to see them.",
        ),
      ];
  return el('div', shown, status, again, resume, dl, ...rest, json);
}

/** An operator's view of the order ends with its history: a heading and the table. */
function historyParts(whole: OrderWithHistory): HTMLElement[] {
  const history = el('tbody');
  for (const h of whole.history) {
    history.append(
      el(
        'tr',
        {},
        el('td', {}, new Date(h.at).toTimeString().slice(0, 8)),
        el('td', { title: h.source_id }, h.source),
        el(
          'td',
          {},
          h.status_before === h.status_after ? h.status_after : `${h.status_before} \u2192 ${h.status_after}`,
        ),
        el('td', {}, h.outcome),
        el('td', {}, h.detail || ''),
      ),
    );
  }
  const heads = ['Time', 'Source', 'Status', 'Outcome', 'Detail'].map((name) => el('th', {}, name));
  return [
    el('h3', {}, 'History'),
    el(
      'div',
      { class: 'scroll' },
      el('table', { class: 'history' }, el('thead', {}, el('tr', {}, ...heads)), history),
    ),
  ];
}
