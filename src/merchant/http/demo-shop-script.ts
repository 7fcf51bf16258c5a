/** What the demo shop's page hands its script: rendered as JSON in the page's `#demo-settings` element. */
export interface DemoShopScriptSettings {
  /** Statuses still being confirmed: the order is fetched again while it has one. */
  waiting: readonly string[];
  refreshMs: number;
  maxRefreshes: number;
  /** The review queue's page size. */
  queuePage: number;
  /** What a person may say of a flagged order (POST /orders/{id}/review). */
  resolutions: readonly string[];
  /** The signed-in customer the page acts for, with the token the shop's server made for it. */
  customer: { id: string; token: string; expires_at: string };
  /** The header the customer's token goes in. */
  tokenHeader: string;
}

/**
 * The demo shop's script: plain browser JavaScript in a string, so there is no build step and
 * nothing to fetch from elsewhere (it works offline). It calls the kit's own storefront API, as a shop's
 * front end would, and writes what it shows with textContent only: no value from an answer becomes
 * markup. The page's markup (demo-shop.ts) names the element ids used here. A constant, served as a
 * file of the kit's (no inline script under the Content-Security-Policy) and the same for every page:
 * what differs per page, the customer's token included, it reads from the page's JSON settings.
 */
export const DEMO_SHOP_SCRIPT = `(() => {
'use strict';
const SETTINGS = JSON.parse(document.getElementById('demo-settings').textContent);
const LAST_ORDER = 'demo-shop:last-order';
const CHOICES = 'demo-shop:choices';
const FIELDS = ['amount', 'currency', 'card', 'mode', 'method', 'country'];
const $ = (id) => document.getElementById(id);
const CUSTOMER = SETTINGS.customer;
const CARDS_PATH = '/customers/' + encodeURIComponent(CUSTOMER.id) + '/cards';

/** An element with text children only (strings become text nodes, never markup). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** Every call the page makes, listed under Requests: what a shop's front end would send. */
async function api(method, path, body, headers) {
  const init = { method, headers: Object.assign({ accept: 'application/json' }, headers || {}) };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let status = 0;
  let json = null;
  try {
    const res = await fetch(path, init);
    status = res.status;
    json = await res.json().catch(() => null);
  } catch (error) {
    json = { message: 'The kit did not answer: ' + error.message };
  }
  logRequest(method, path, status, json);
  return { status, body: json || {} };
}

function logRequest(method, path, status, json) {
  const log = $('log');
  const note = json && json.code ? ' ' + json.code : '';
  const tone = status >= 200 && status < 300 ? 'ok' : 'err';
  log.prepend(
    el('li', {}, el('code', {}, method + ' ' + path), ' ', el('span', { class: tone }, String(status || 'no answer') + note)),
  );
  while (log.children.length > 20) log.lastElementChild.remove();
}

/** The answer's message and its field errors, in one line. */
function problem(answer) {
  const b = answer.body;
  const fields = Object.entries(b.errors || {}).map(([field, list]) => field + ': ' + [].concat(list).join(', '));
  // The page's customer token lasts an hour: a reload gets a new one.
  const stale = b.code === 'CUSTOMER_TOKEN_INVALID' ? ' Reload the page for a new customer token.' : '';
  return [b.code, b.message].filter(Boolean).join(': ') + (fields.length ? ' (' + fields.join('; ') + ')' : '') + stale;
}

/** The headers of a call about the signed-in customer's cards: their token. */
function asCustomer() {
  return { [SETTINGS.tokenHeader]: CUSTOMER.token };
}

function say(id, text, tone) {
  const node = $(id);
  node.textContent = text;
  node.className = 'message' + (tone ? ' ' + tone : '');
}

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

/** { [order id]: { paying } } of the orders placed here, oldest first. */
function ownOrders() {
  try {
    const own = JSON.parse(localStorage.getItem(OWN_ORDERS) || '{}');
    return own && typeof own === 'object' && !Array.isArray(own) ? own : {};
  } catch {
    return {};
  }
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
  let answer = await api('GET', path, undefined, asOperator || undefined);
  if (asOperator && (answer.status === 401 || answer.status === 403) && read === reads) {
    say('ops-message', 'The order is shown as a shopper sees it: ' + problem(answer), 'err');
    answer = await api('GET', path);
  }
  if (read !== reads) return;
  const box = $('order');
  if (answer.status === 404) {
    try {
      localStorage.removeItem(LAST_ORDER);
    } catch {}
    box.replaceChildren(el('p', { class: 'hint' }, 'The last order (' + id + ') is not known to this kit any more. Place a new one.'));
    shownOrder = null;
    showPayLabel();
    setOperator(null);
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
  const json = el('p', { class: 'hint' }, 'The same as JSON: ', el('a', { href: '/orders/' + encodeURIComponent(order.id) }, 'GET /orders/' + order.id));
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

// ---- placing and paying an order ----

function payKind() {
  return document.querySelector('input[name="kind"]:checked').value;
}

function showKind() {
  const card = payKind() === 'card';
  $('card-fields').hidden = !card;
  $('redirect-fields').hidden = card;
}

/** POST /orders from the form's amount and currency, for the signed-in customer; null (and said) if refused. */
async function createOrder(messageId) {
  say(messageId, 'Creating the order\\u2026');
  const created = await api('POST', '/orders', {
    amount: $('amount').value.trim(),
    currency: $('currency').value,
    description: 'Demo shop order',
    customer: { merchant_customer_id: CUSTOMER.id },
  });
  if (created.status !== 201) {
    say(messageId, 'The order was refused: ' + problem(created), 'err');
    return null;
  }
  const order = created.body.data.order;
  remember(order.id);
  // The creator's answer names the customer: the one GET /orders/{id} shows only to operators.
  if (order.customer && order.customer.merchant_customer_id === CUSTOMER.id) keepOwn(order.id, false);
  saveChoices();
  return order;
}

/**
 * A payment's answer: off to the page it names (a challenge, a hosted checkout), or said, and the order
 * shown as it now stands. False when the browser is leaving the page.
 */
async function followPayment(paid, orderId, messageId, pageName) {
  notePayment(orderId, paid);
  const next = paid.body.data && paid.body.data.next_action;
  if (next && next.type === 'redirect' && /^https?:/.test(next.url)) {
    say(messageId, 'Going to the ' + pageName + ' page\\u2026');
    location.assign(next.url);
    return false;
  }
  // In progress is not a failure: the gateway holds a payment for the order whose outcome is coming.
  if (paid.body.code === 'PAYMENT_IN_PROGRESS') say(messageId, paid.body.message, 'wait');
  else if (answerLost(paid))
    say(
      messageId,
      (paid.status === 0 ? 'The kit did not answer' : 'The kit failed before answering (' + paid.status + ')') +
        ': the payment may or may not have gone through. The order below shows where it stands; while it is unpaid, paying again pays this same order, not a new one.',
      'err',
    );
  else if (paid.status >= 400) say(messageId, 'The payment did not go through: ' + problem(paid), 'err');
  else if (paid.status === 202) say(messageId, 'The outcome is not known yet; the order will be updated.', 'wait');
  else say(messageId, 'Done.', 'ok');
  await showOrder(orderId, true);
  return true;
}

async function placeAndPay(event) {
  event.preventDefault();
  const button = $('pay');
  button.disabled = true;
  say('saved-message', '');
  try {
    const order = await orderToPay('form-message');
    if (!order) return;
    say('form-message', 'Paying ' + order.reference + '\\u2026');
    const path = '/orders/' + encodeURIComponent(order.id) + '/pay/';
    const byCard = payKind() === 'card';
    // The customer's consent, asked beside the card: only then does the kit keep it, for them alone.
    const save = byCard && $('save-card').checked;
    const paid = byCard
      ? await api(
          'POST',
          path + 'card',
          {
            mode: $('mode').value,
            // The sandbox approves any future expiry; the card number decides the outcome.
            card: { number: $('card').value, exp_month: 12, exp_year: new Date().getFullYear() + 3, cvv: '123', name: 'Demo Shopper' },
            save_card: save || undefined,
          },
          save ? asCustomer() : undefined,
        )
      : await api('POST', path + 'redirect', {
          payment_method: $('method').value,
          customer: { country_code: $('country').value.trim().toUpperCase() || undefined },
        });
    const stayed = await followPayment(paid, order.id, 'form-message', byCard ? '3D Secure challenge' : 'payment');
    if (stayed && save) await loadSavedCards();
  } finally {
    button.disabled = false;
  }
}

// ---- the signed-in customer's saved cards: listed, paid with, removed (with the customer's token) ----

let savedBusy = false;

async function loadSavedCards() {
  const answer = await api('GET', CARDS_PATH, undefined, asCustomer());
  const box = $('saved');
  if (answer.status !== 200) {
    box.replaceChildren();
    delete box.dataset.count;
    say('saved-message', 'The saved cards could not be read: ' + problem(answer), 'err');
    return;
  }
  const { cards, synced } = answer.body.data;
  box.dataset.count = String(cards.length);
  box.replaceChildren();
  if (cards.length === 0)
    box.append(el('p', { class: 'hint', id: 'saved-empty' }, 'No saved card yet. Tick "Save this card for next time" when you pay by card.'));
  else box.append(el('table', { class: 'saved' }, el('tbody', {}, ...cards.map(savedRow))));
  // The gateway did not answer: these are the kit's own records, perhaps behind the gateway's.
  if (!synced) box.append(el('p', { class: 'hint' }, "The gateway did not answer: the kit's own records are shown."));
}

function savedRow(card) {
  const label = card.brand + ' \\u2022\\u2022\\u2022\\u2022 ' + card.last4;
  const expiry = String(card.exp_month).padStart(2, '0') + '/' + card.exp_year;
  const pay = el('button', { type: 'button', class: 'pay-saved' }, 'Pay with this card');
  const remove = el('button', { type: 'button', class: 'remove-saved secondary' }, 'Remove');
  pay.addEventListener('click', () => payWithSaved(card, label));
  remove.addEventListener('click', () => removeSaved(card, label));
  return el(
    'tr',
    { 'data-saved-card': card.id, 'data-expired': String(card.expired) },
    el(
      'td',
      { title: card.id },
      el('span', { class: 'number' }, label),
      el('br'),
      el('span', { class: 'hint' }, 'expiry ' + expiry),
      card.expired ? ' ' : null,
      card.expired ? el('span', { class: 'badge tone-bad small' }, 'expired') : null,
    ),
    el('td', {}, el('div', { class: 'actions' }, pay, remove)),
  );
}

/** One saved-card action at a time; its buttons wait meanwhile. False when another is under way. */
function savedWorking(busy) {
  if (busy && savedBusy) return false;
  savedBusy = busy;
  for (const button of $('saved').querySelectorAll('button')) button.disabled = busy;
  return true;
}

/** Statuses whose order takes another payment attempt (the spec's pending, failed, cancelled, expired). */
const PAYABLE = ['pending', 'failed', 'cancelled', 'expired'];

/**
 * The order shown when the customer may pay it again: placed here for them, for the form's amount and
 * currency, and pending (never paid, or its payment's answer was lost) or ended unpaid. A new order for
 * the same purchase would be a new reference, so a second charge if the first payment went through;
 * the same order again is adopted by the kit (the gateway's ERR_DUPLICATE on its reference) or told to
 * wait (PAYMENT_IN_PROGRESS). Null when the form asks for another purchase.
 */
function orderToRetry() {
  const o = shownOrder;
  if (!o || !isOwn(o.id) || !PAYABLE.includes(o.status) || o.currency !== $('currency').value) return null;
  return Number($('amount').value.trim()) === Number(o.amount_formatted) ? o : null;
}

/** The pay button says whether it pays the order shown again or places a new one. */
function showPayLabel() {
  $('pay').textContent = orderToRetry() ? 'Pay this order again' : 'Place the order and pay';
}

/** The order to pay: the one shown, again, when it is the customer's to pay; else a new one from the form. */
async function orderToPay(messageId) {
  const again = orderToRetry();
  if (!again) return createOrder(messageId);
  remember(again.id);
  saveChoices();
  return again;
}

async function payWithSaved(card, label) {
  if (!savedWorking(true)) return;
  say('form-message', '');
  let paid = null;
  try {
    const order = await orderToPay('saved-message');
    if (!order) return;
    say('saved-message', 'Paying ' + order.reference + ' with ' + label + '\\u2026');
    paid = await api('POST', '/orders/' + encodeURIComponent(order.id) + '/pay/saved', { card: card.id, mode: $('mode').value }, asCustomer());
    if (!(await followPayment(paid, order.id, 'saved-message', 'payment'))) return;
  } finally {
    savedWorking(false);
  }
  // The page's token lapsed: the payment's answer says so and to reload; a read of the cards with the
  // same token would only put "could not be read" in its place.
  if (paid && paid.body.code === 'CUSTOMER_TOKEN_INVALID') return;
  // A removed or expired card is shown for what it is now.
  await loadSavedCards();
}

async function removeSaved(card, label) {
  if (!savedWorking(true)) return;
  try {
    const answer = await api('DELETE', CARDS_PATH + '/' + encodeURIComponent(card.id), undefined, asCustomer());
    if (answer.status === 200) say('saved-message', label + ' is removed.', 'ok');
    else say('saved-message', label + ' could not be removed: ' + problem(answer), 'err');
  } finally {
    savedWorking(false);
  }
  await loadSavedCards();
}

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

// ---- start ----

for (const radio of document.querySelectorAll('input[name="kind"]')) radio.addEventListener('change', showKind);
showKind();
restoreChoices(FIELDS.filter((id) => id !== 'method'), true);
$('pay-form').addEventListener('submit', placeAndPay);
// Another amount or currency is another purchase: a new order.
for (const id of ['amount', 'currency']) $(id).addEventListener('input', showPayLabel);
$('capture').addEventListener('click', () => operate('capture'));
$('void').addEventListener('click', () => operate('void'));
$('refund').addEventListener('click', () => operate('refund'));
$('ops-form').addEventListener('submit', (event) => event.preventDefault());
// The order read again with the token once it is typed (or without, once cleared).
let tokenTyped = null;
$('ops-token').addEventListener('input', () => {
  clearTimeout(tokenTyped);
  tokenTyped = setTimeout(() => {
    say('ops-message', '');
    if (shownId) showOrder(shownId, true);
  }, 400);
});
$('queue-form').addEventListener('submit', (event) => {
  event.preventDefault();
  loadQueue(false);
});
for (const row of document.querySelectorAll('[data-card]')) {
  row.addEventListener('click', () => {
    document.querySelector('input[name="kind"][value="card"]').checked = true;
    $('card').value = row.dataset.card;
    showKind();
  });
}
$('customer-until').textContent = new Date(CUSTOMER.expires_at).toTimeString().slice(0, 5);
loadMethods();
loadSavedCards();
const last = lastOrderId();
if (last) showOrder(last, true);
})();
`;
