/**
 * The demo shop's script, part 4 of 5: the operator's actions on the order shown (capture, void,
 * refund, a lost refund retried with its key) and the review queue (list, resolve).
 */
export const OPERATOR = `\
// ---- operator actions: the whole order, capture, void, refund (an operator's token) ----

function setOperator(order) {
  const ops = $('ops');
  const status = order && order.status;
  const can = {
    capture: status === 'authorized',
    void: status === 'authorized',
    refund: status === 'paid' || status === 'partially_refunded',
  };
  // Any order: its token field is also what shows the order whole.
  ops.hidden = !order;
  if (order && ops.dataset.orderId !== order.id) $('refund-amount').value = order.amount_formatted;
  ops.dataset.orderId = order ? order.id : '';
  $('capture').hidden = !can.capture;
  $('void').hidden = !can.void;
  $('refund-fields').hidden = !can.refund;
}

/**
 * The refund last pressed whose answer was lost ({ orderId, amount, key }): none came, or a 5xx (the
 * kit's OUTCOME_UNKNOWN among them). The refund may be done, so pressed again for the same order and
 * amount it is retried with the same Idempotency-Key, never made twice.
 */
let lostRefund = null;

/** A refund press: its order, amount and key; the lost one's again when this press retries it. */
function refundPress(orderId, amountText) {
  const amount = Number(amountText);
  if (lostRefund && lostRefund.orderId === orderId && lostRefund.amount === amount) return lostRefund;
  return { orderId, amount, key: 'demo-' + Date.now().toString(36) + '-' + Math.random().toString(36).slice(2) };
}

async function operate(action) {
  const id = $('ops').dataset.orderId;
  // The token lives in this input only: never stored, so a reload forgets it.
  const token = $('ops-token').value.trim();
  if (!token) return say('ops-message', 'Paste the operator token first (npm start prints it).', 'err');
  const headers = { authorization: 'Bearer ' + token };
  let body = {};
  let refund = null;
  if (action === 'refund') {
    body = { amount: $('refund-amount').value.trim(), reason: 'demo shop refund' };
    // One key per answered press: a second press after an answer is a second refund.
    refund = refundPress(id, body.amount);
    headers['idempotency-key'] = refund.key;
  }
  const answer = await api('POST', '/orders/' + encodeURIComponent(id) + '/' + action, body, headers);
  const lost = answer.status === 0 || answer.status >= 500;
  if (refund) lostRefund = lost ? refund : null;
  if (answer.status === 200) say('ops-message', action + ': done.', 'ok');
  else if (refund && lost)
    say('ops-message', 'refund: ' + problem(answer) + '. The refund may or may not be done: pressing Refund again for this amount retries it (the same Idempotency-Key), never a second refund.', 'err');
  else say('ops-message', action + ': ' + problem(answer), 'err');
  await showOrder(id, true);
}

// ---- the operator panel: the review queue (GET /orders?needs_review=true, POST /orders/{id}/review) ----

let queueCursor = null;

function queueHeaders() {
  // The token lives in this input only, like the operator actions' one.
  const token = $('queue-token').value.trim();
  return token ? { authorization: 'Bearer ' + token } : null;
}

async function loadQueue(more) {
  const headers = queueHeaders();
  if (!headers) return say('queue-message', "Paste an operator's token first (npm run cli -- operator add, or OPS_API_TOKEN).", 'err');
  const query = '?needs_review=true&limit=' + SETTINGS.queuePage + (more && queueCursor ? '&cursor=' + encodeURIComponent(queueCursor) : '');
  const answer = await api('GET', '/orders' + query, undefined, headers);
  if (answer.status !== 200) return say('queue-message', 'The queue could not be read: ' + problem(answer), 'err');
  const data = answer.body.data;
  queueCursor = data.next_cursor;
  const box = $('queue');
  let body = box.querySelector('tbody');
  if (!more || !body) {
    body = el('tbody');
    box.replaceChildren(
      el('div', { class: 'scroll' }, el('table', { class: 'queue' }, el('thead', {}, el('tr', {}, el('th', {}, 'Created'), el('th', {}, 'Order'), el('th', {}, 'Status'), el('th', {}, 'Amount'), el('th', {}, 'Why it is flagged'), el('th', {}, ''))), body)),
    );
  }
  for (const order of data.orders) body.append(queueRow(order));
  const shown = body.querySelectorAll('tr[data-order-id]').length;
  const old = $('queue-more');
  if (old) old.remove();
  if (queueCursor) {
    const button = el('button', { type: 'button', id: 'queue-more', class: 'secondary' }, 'More');
    button.addEventListener('click', () => loadQueue(true));
    box.append(button);
  }
  box.dataset.count = String(shown);
  say('queue-message', shown === 0 ? 'No order needs review.' : shown + ' flagged order' + (shown === 1 ? '' : 's') + (queueCursor ? ' shown; there are more.' : '.'), shown === 0 ? 'ok' : '');
}

function queueRow(order) {
  const row = el(
    'tr',
    { 'data-order-id': order.id },
    el('td', {}, new Date(order.created_at).toISOString().replace('T', ' ').slice(0, 16)),
    el('td', {}, el('a', { href: '/?order=' + encodeURIComponent(order.id) }, order.reference)),
    el('td', {}, order.status),
    el('td', {}, order.amount_formatted + ' ' + order.currency),
    el('td', { class: 'reason' }, order.review_reason || ''),
  );
  const open = el('button', { type: 'button', class: 'resolve' }, 'Resolve');
  row.append(el('td', {}, open));
  open.addEventListener('click', () => {
    const next = row.nextElementSibling;
    if (next && next.classList.contains('resolve-row')) return next.remove();
    row.after(resolveRow(order));
  });
  return row;
}

function resolveRow(order) {
  const select = el('select', { class: 'resolution', 'aria-label': 'Resolution' }, ...SETTINGS.resolutions.map((r) => el('option', { value: r }, r.replace('_', ' '))));
  const note = el('input', { class: 'note', 'aria-label': 'Note', placeholder: 'What you found and did (kept in the history)', maxlength: '512' });
  const confirm = el('button', { type: 'submit', class: 'confirm' }, 'Resolve the review');
  const form = el('form', {}, select, note, confirm);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const headers = queueHeaders();
    if (!headers) return say('queue-message', "Paste an operator's token first.", 'err');
    confirm.disabled = true;
    try {
      const answer = await api('POST', '/orders/' + encodeURIComponent(order.id) + '/review', { resolution: select.value, note: note.value.trim() }, headers);
      if (answer.status !== 200) return say('queue-message', order.reference + ': ' + problem(answer), 'err');
      await loadQueue(false);
      say('queue-message', order.reference + ': resolved (' + select.value + ').', 'ok');
      if ($('ops').dataset.orderId === order.id) await showOrder(order.id, true);
    } finally {
      confirm.disabled = false;
    }
  });
  return el('tr', { class: 'resolve-row', 'data-for': order.id }, el('td', { colspan: '6' }, form));
}

`;
