import type { components, Order } from '@merchant-kit/client';
import { api, asOperator, problem } from './api.js';
import { showOrder } from './order.js';
import { $, el, SETTINGS, SEVERAL_MERCHANTS, say } from './page.js';

/** The operator panel: the review queue (GET /orders?needs_review=true, POST /orders/{id}/review). */

let queueCursor: string | null = null;

/** The queue's token lives in its input only, like the operator actions' one. */
const queueHeaders = () => asOperator('queue-token');

export async function loadQueue(more: boolean): Promise<void> {
  const headers = queueHeaders();
  if (!headers)
    return say(
      'queue-message',
      "Paste an operator's token first (npm run cli -- operator add, or OPS_API_TOKEN).",
      'err',
    );
  const query = `?needs_review=true&limit=${SETTINGS.queuePage}${more && queueCursor ? `&cursor=${encodeURIComponent(queueCursor)}` : ''}`;
  const answer = await api<components['schemas']['OrderList']>('GET', `/orders${query}`, undefined, headers);
  const data = answer.body.data;
  if (answer.status !== 200 || !data)
    return say('queue-message', `The queue could not be read: ${problem(answer)}`, 'err');
  queueCursor = data.next_cursor;
  const box = $('queue');
  let body = box.querySelector('tbody');
  if (!more || !body) {
    body = el('tbody');
    // Platform mode: whose order each is, last but one.
    const names = ['Created', 'Order', 'Status', 'Amount', 'Why it is flagged'];
    if (SEVERAL_MERCHANTS) names.push('Merchant');
    const heads = [...names, ''].map((name) => el('th', {}, name));
    box.replaceChildren(
      el(
        'div',
        { class: 'scroll' },
        el('table', { class: 'queue' }, el('thead', {}, el('tr', {}, ...heads)), body),
      ),
    );
  }
  for (const order of data.orders) body.append(queueRow(order));
  const shown = body.querySelectorAll('tr[data-order-id]').length;
  document.getElementById('queue-more')?.remove();
  if (queueCursor) {
    const button = el('button', { type: 'button', id: 'queue-more', class: 'secondary' }, 'More');
    button.addEventListener('click', () => loadQueue(true));
    box.append(button);
  }
  box.dataset.count = String(shown);
  say(
    'queue-message',
    shown === 0
      ? 'No order needs review.'
      : `${shown} flagged order${shown === 1 ? '' : 's'}${queueCursor ? ' shown; there are more.' : '.'}`,
    shown === 0 ? 'ok' : '',
  );
}

function queueRow(order: Order): HTMLTableRowElement {
  const row = el(
    'tr',
    { 'data-order-id': order.id },
    el('td', {}, new Date(order.created_at).toISOString().replace('T', ' ').slice(0, 16)),
    el('td', {}, el('a', { href: `/?order=${encodeURIComponent(order.id)}` }, order.reference)),
    el('td', {}, order.status),
    el('td', {}, `${order.amount_formatted} ${order.currency}`),
    el('td', { class: 'reason' }, order.review_reason || ''),
    SEVERAL_MERCHANTS ? el('td', { class: 'merchant' }, String(order.merchant_id ?? '')) : null,
  );
  const open = el('button', { type: 'button', class: 'resolve' }, 'Resolve');
  row.append(el('td', {}, open));
  open.addEventListener('click', () => {
    const next = row.nextElementSibling;
    if (next?.classList.contains('resolve-row')) return next.remove();
    row.after(resolveRow(order));
  });
  return row;
}

function resolveRow(order: Order): HTMLTableRowElement {
  const select = el(
    'select',
    { class: 'resolution', 'aria-label': 'Resolution' },
    ...SETTINGS.resolutions.map((r) => el('option', { value: r }, r.replace('_', ' '))),
  );
  const note = el('input', {
    class: 'note',
    'aria-label': 'Note',
    placeholder: 'What you found and did (kept in the history)',
    maxlength: '512',
  });
  const confirm = el('button', { type: 'submit', class: 'confirm' }, 'Resolve the review');
  const form = el('form', {}, select, note, confirm);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const headers = queueHeaders();
    if (!headers) return say('queue-message', "Paste an operator's token first.", 'err');
    confirm.disabled = true;
    try {
      const answer = await api(
        'POST',
        `/orders/${encodeURIComponent(order.id)}/review`,
        { resolution: select.value, note: note.value.trim() },
        headers,
      );
      if (answer.status !== 200) return say('queue-message', `${order.reference}: ${problem(answer)}`, 'err');
      await loadQueue(false);
      say('queue-message', `${order.reference}: resolved (${select.value}).`, 'ok');
      if ($('ops').dataset.orderId === order.id) await showOrder(order.id, true);
    } finally {
      confirm.disabled = false;
    }
  });
  return el(
    'tr',
    { class: 'resolve-row', 'data-for': order.id },
    el('td', { colspan: SEVERAL_MERCHANTS ? '7' : '6' }, form),
  );
}
