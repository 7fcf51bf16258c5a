/**
 * The demo shop's script, part 2 of 5: the payment methods listed as the page loads, what the browser
 * remembers (the orders placed here, each one's client secret, whether each was paid, the form's
 * choices) and the order as the kit knows it (GET /orders/{id}): to a shopper its status and amounts
 * (with the order's secret), to an operator the whole order and its history, read again while it is
 * being confirmed.
 */
export const ORDER = `\
// ---- payment methods (GET /payment-methods), as the page loads ----

async function loadMethods() {
  const answer = await api('GET', '/payment-methods');
  const box = $('methods');
  const select = $('method');
  const methods = (answer.body.data && answer.body.data.payment_methods) || [];
  box.replaceChildren();
  select.replaceChildren();
  if (answer.status !== 200) {
    box.append(el('p', { class: 'message err' }, 'Could not load the payment methods: ' + problem(answer)));
    return;
  }
  if (methods.length === 0) box.append(el('p', { class: 'hint' }, 'The gateway offers no redirect method to this account.'));
  const list = el('ul', { class: 'methods' });
  for (const m of methods) {
    const where = m.supported_countries.length ? m.supported_countries.join(', ') : 'any country';
    const what = m.supported_currencies.length ? m.supported_currencies.join(', ') : 'any currency';
    list.append(
      el('li', { 'data-method': m.payment_method }, el('strong', {}, m.label), ' ', el('code', {}, m.payment_method), el('br'), el('span', { class: 'hint' }, where + '; ' + what)),
    );
    select.append(el('option', { value: m.payment_method }, m.label + ' (' + m.payment_method + ')'));
  }
  box.append(list);
  restoreChoices(['method'], false);
}

// ---- the order, as the backend knows it (GET /orders/{id}) ----

/**
 * The orders this page placed for its customer, with whether a payment of each was started: GET
 * /orders/{id} shows anyone holding the id the status and amounts only, not whose order it is.
 */
const OWN_ORDERS = 'demo-shop:own-orders';
const OWN_KEPT = 20;

let timer = null;
let refreshes = 0;
let shownId = null;
/** Only the latest read is shown: an older answer arriving late does not replace it. */
let reads = 0;
/** The order shown, as last read: a saved card pays it when it is still the customer's to pay. */
let shownOrder = null;

function remember(id) {
  try {
    localStorage.setItem(LAST_ORDER, id);
  } catch {}
}

/** An object kept under key in localStorage; {} when there is none, or what is there is not one. */
function storedObject(key) {
  try {
    const kept = JSON.parse(localStorage.getItem(key) || '{}');
    return kept && typeof kept === 'object' && !Array.isArray(kept) ? kept : {};
  } catch {
    return {};
  }
}

/** { [order id]: { paying } } of the orders placed here, oldest first. */
function ownOrders() {
  return storedObject(OWN_ORDERS);
}

function keepOwn(id, paying) {
  const own = ownOrders();
  delete own[id];
  own[id] = { paying };
  for (const old of Object.keys(own).slice(0, -OWN_KEPT)) delete own[old];
  try {
    localStorage.setItem(OWN_ORDERS, JSON.stringify(own));
  } catch {}
}

const isOwn = (id) => Object.prototype.hasOwnProperty.call(ownOrders(), id);

/**
 * Each order's client secret, as POST /orders answered it (once; no read shows it again): the
 * shopper's reads and payments of the order send it, or the kit answers 404, as for no order at all.
 */
const ORDER_SECRETS = 'demo-shop:order-secrets';

function orderSecrets() {
  return storedObject(ORDER_SECRETS);
}

function keepSecret(id, secret) {
  if (typeof secret !== 'string') return;
  const kept = orderSecrets();
  delete kept[id];
  kept[id] = secret;
  for (const old of Object.keys(kept).slice(0, -OWN_KEPT)) delete kept[old];
  try {
    localStorage.setItem(ORDER_SECRETS, JSON.stringify(kept));
  } catch {}
}

/** The headers of the shopper's call about an order: its secret (when this browser holds it), then headers. */
function asShopper(id, headers) {
  const secret = orderSecrets()[id];
  return Object.assign(typeof secret === 'string' ? { [SETTINGS.secretHeader]: secret } : {}, headers || {});
}

/**
 * Whether the gateway holds a payment of the order: the operator's view names it; for the public one
 * the page goes by the payments it sent (an order placed elsewhere and still pending: none known).
 */
function paymentStarted(order) {
  if ('payment' in order) return order.payment !== null;
  if (order.status !== 'pending') return true;
  return isOwn(order.id) && ownOrders()[order.id].paying === true;
}

/**
 * A call whose answer was lost: none came (the kit died, the network dropped it), or the kit failed
 * midway (a 500; a proxy's 502 or 504). What was asked may have been done. A 503 is the kit's own
 * answer that nothing was (a gateway down, the kit still starting), or OUTCOME_UNKNOWN, said as such.
 */
const answerLost = (answer) => answer.status === 0 || (answer.status >= 500 && answer.status !== 503);

/** A payment's answer: an attempt stands at the gateway unless nothing was started (or may, if it was lost). */
function notePayment(orderId, answer) {
  const started = answer.status === 200 || answer.status === 202 || answer.body.code === 'PAYMENT_IN_PROGRESS' || answerLost(answer);
  if (started && isOwn(orderId)) keepOwn(orderId, true);
}

/** The operator token typed under "Operator actions", as a header; null when the field is empty. */
function opsHeaders() {
  const token = $('ops-token').value.trim();
  return token ? { authorization: 'Bearer ' + token } : null;
}

/** The form as it was last sent, so that coming back from a payment page keeps the shopper's choices. */
function saveChoices() {
  const choices = { kind: payKind() };
  for (const id of FIELDS) choices[id] = $(id).value;
  try {
    localStorage.setItem(CHOICES, JSON.stringify(choices));
  } catch {}
}

function restoreChoices(ids, kindToo) {
  let choices = null;
  try {
    choices = JSON.parse(localStorage.getItem(CHOICES) || 'null');
  } catch {}
  if (!choices || typeof choices !== 'object') return;
  for (const id of ids) {
    const field = $(id);
    // A select keeps its value only when it has that option: a stale choice leaves the default.
    if (typeof choices[id] === 'string' && (field.tagName !== 'SELECT' || [...field.options].some((o) => o.value === choices[id])))
      field.value = choices[id];
  }
  if (!kindToo) return;
  const radio = document.querySelector('input[name="kind"][value="' + (choices.kind === 'redirect' ? 'redirect' : 'card') + '"]');
  radio.checked = true;
  showKind();
}

function lastOrderId() {
  const fromQuery = new URLSearchParams(location.search).get('order');
  if (fromQuery) return fromQuery;
  try {
    return localStorage.getItem(LAST_ORDER);
  } catch {
    return null;
  }
}

const TONES = { paid: 'good', authorized: 'good', pending: 'wait', requires_action: 'wait', failed: 'bad', cancelled: 'bad', expired: 'bad' };

/**
 * The order as GET /orders/{id} shows it: to the shopper its status and amounts; with the operator
 * token typed in, the whole order and its history. A token the kit refuses is said, beside it.
 */
async function showOrder(id, fresh) {
  clearTimeout(timer);
  if (fresh || id !== shownId) refreshes = 0;
  shownId = id;
  const read = ++reads;
  const path = '/orders/' + encodeURIComponent(id);
  const asOperator = opsHeaders();
  let answer = await api('GET', path, undefined, asOperator || asShopper(id));
  if (asOperator && (answer.status === 401 || answer.status === 403) && read === reads) {
    say('ops-message', 'The order is shown as a shopper sees it: ' + problem(answer), 'err');
    answer = await api('GET', path, undefined, asShopper(id));
  }
  if (read !== reads) return;
  const box = $('order');
  if (answer.status === 404) {
    try {
      localStorage.removeItem(LAST_ORDER);
    } catch {}
    // Without its secret (an order placed in another browser, a link from the review queue) the kit
    // says only that there is no such order: an operator's token shows it.
    const secretHeld = typeof orderSecrets()[id] === 'string';
    box.replaceChildren(
      el(
        'p',
        { class: 'hint', id: 'order-unknown' },
        secretHeld || asOperator
          ? 'The last order (' + id + ') is not known to this kit any more. Place a new one.'
          : 'The order ' + id + ' was not placed in this browser: the kit shows an order to whoever holds its client secret (POST /orders answers it), or to an operator. Type a token under Operator actions to see it, or place a new one.',
      ),
    );
    shownOrder = null;
    showPayLabel();
    setOperator(null);
    // Its token field stays: an operator's token shows an order this browser holds no secret of.
    if (!secretHeld && !asOperator) $('ops').hidden = false;
    return;
  }
  if (answer.status !== 200) {
    box.replaceChildren(el('p', { class: 'message err' }, 'Could not load the order: ' + problem(answer)));
    // A kit that did not answer (restarting, say) is asked again, as an order being confirmed is.
    if ((answer.status === 0 || answer.status >= 500) && refreshes < SETTINGS.maxRefreshes) {
      refreshes += 1;
      timer = setTimeout(() => showOrder(id, false), SETTINGS.refreshMs);
    }
    return;
  }
  const order = answer.body.data.order;
  shownOrder = order;
  showPayLabel();
  // An order without a payment attempt (one the gateway refused outright) has nothing to confirm.
  const waiting = SETTINGS.waiting.includes(order.status) && paymentStarted(order);
  box.replaceChildren(renderOrder(order, waiting));
  setOperator(order);
  if (waiting && refreshes < SETTINGS.maxRefreshes) {
    refreshes += 1;
    timer = setTimeout(() => showOrder(id, false), SETTINGS.refreshMs);
  }
}

/** The customer an order names, in one line (the operator's view only). */
function customerText(c) {
  if (!c) return null;
  const name = [c.first_name, c.last_name].filter(Boolean).join(' ');
  return [c.merchant_customer_id, name, c.email].filter(Boolean).join(', ');
}

function renderOrder(order, waiting) {
  const money = (formatted) => (formatted === null ? null : formatted + ' ' + order.currency);
  // The operator's view (a token that may read): the whole order, with its history.
  const whole = Array.isArray(order.history);
  const p = order.payment;
  const rows = [
    ['Order', order.id],
    ['Reference', order.reference],
    ['Amount', money(order.amount_formatted)],
    ['Captured', money(order.captured_amount_formatted)],
    ['Refunded', order.refunded_amount ? money(order.refunded_amount_formatted) : null],
    ['Charged back', order.disputed_amount ? money(order.disputed_amount_formatted) : null],
  ];
  if (whole)
    rows.push(
      ['Customer', customerText(order.customer)],
      ['Description', order.description],
      ['Payment', p ? [p.kind, p.mode, p.payment_method].filter(Boolean).join(', ') : 'none yet'],
      ['Gateway transaction', p && p.gateway_transaction_id],
      ['Payment session', p && p.payment_session_id],
      ['Failure', order.failure_code],
      // An authorisation lapses unless captured or voided by then.
      ['Capture before', order.capture_before && new Date(order.capture_before).toUTCString()],
      ['Needs review', order.needs_review ? order.review_reason || 'yes' : null],
    );
  const dl = el('dl');
  for (const [term, value] of rows) {
    if (value === null || value === undefined || value === '') continue;
    dl.append(el('dt', {}, term), el('dd', {}, String(value)));
  }
  const status = el(
    'p',
    { class: 'status' },
    el('span', { class: 'badge tone-' + (TONES[order.status] || 'info'), id: 'order-status' }, order.status),
    waiting
      ? el('span', { class: 'hint' }, refreshes < SETTINGS.maxRefreshes ? ' being confirmed: checking again every ' + SETTINGS.refreshMs / 1000 + ' s' : ' still being confirmed')
      : null,
  );
  const again = waiting && refreshes >= SETTINGS.maxRefreshes ? el('button', { type: 'button', id: 'check-again' }, 'Check again') : null;
  if (again) again.addEventListener('click', () => showOrder(order.id, true));
  // A shopper who came back before finishing the challenge or the hosted checkout: its page again.
  const next = order.next_action;
  const resume =
    next && next.type === 'redirect' && /^https?:/.test(next.url)
      ? el('p', {}, el('a', { href: next.url, id: 'continue-payment' }, 'Continue the payment'))
      : null;
  // A link would send no header: the order's JSON is for a request that carries its secret or a token.
  const json = el('p', { class: 'hint' }, 'The same as JSON: ', el('code', {}, 'GET /orders/' + order.id), whole ? ' with the operator token' : ' with its ' + SETTINGS.secretHeader + ' header');
  if (!whole)
    return el(
      'div',
      { class: 'order', 'data-status': order.status, 'data-order-id': order.id },
      status,
      again,
      resume,
      dl,
      el('p', { class: 'hint', id: 'order-whole-hint' }, "Who pays, the payment's ids and the history are for operators: type a token under Operator actions to see them."),
      json,
    );
  const history = el('tbody');
  for (const h of order.history) {
    history.append(
      el(
        'tr',
        {},
        el('td', {}, new Date(h.at).toTimeString().slice(0, 8)),
        el('td', { title: h.source_id }, h.source),
        el('td', {}, h.status_before === h.status_after ? h.status_after : h.status_before + ' \\u2192 ' + h.status_after),
        el('td', {}, h.outcome),
        el('td', {}, h.detail || ''),
      ),
    );
  }
  return el(
    'div',
    { class: 'order', 'data-status': order.status, 'data-order-id': order.id },
    status,
    again,
    resume,
    dl,
    el('h3', {}, 'History'),
    el('div', { class: 'scroll' }, el('table', { class: 'history' }, el('thead', {}, el('tr', {}, el('th', {}, 'Time'), el('th', {}, 'Source'), el('th', {}, 'Status'), el('th', {}, 'Outcome'), el('th', {}, 'Detail'))), history)),
    json,
  );
}

`;
