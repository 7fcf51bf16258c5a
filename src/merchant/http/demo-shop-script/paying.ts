/**
 * The demo shop's script, part 3 of 5: placing an order and paying it (by card, by redirect, with a
 * saved card), the same order paid again when its payment failed or its answer was lost, and the
 * signed-in customer's saved cards listed, paid with and removed.
 */
export const PAYING = `\
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
  // Answered this once: the order's reads and payments need it (asShopper).
  keepSecret(order.id, order.client_secret);
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
          asShopper(order.id, save ? asCustomer() : undefined),
        )
      : await api(
          'POST',
          path + 'redirect',
          {
            payment_method: $('method').value,
            customer: { country_code: $('country').value.trim().toUpperCase() || undefined },
          },
          asShopper(order.id),
        );
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
  // The page's token lapsed (an hour): the list stays as it was, and what was said stays, with how to go on.
  if (answer.body.code === 'CUSTOMER_TOKEN_INVALID') {
    const said = $('saved-message').textContent;
    const reload = 'Reload the page for a new customer token.';
    if (!said.endsWith(reload)) say('saved-message', (said ? said + ' ' : '') + reload, 'err');
    return;
  }
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
    // A token for this order alone, as the shop's server mints one for the customer it signed in.
    const minted = await api('POST', '/demo-shop/orders/' + encodeURIComponent(order.id) + '/customer-token');
    if (minted.status !== 201) {
      say('saved-message', 'No token to pay this order: ' + problem(minted), 'err');
      return;
    }
    const forOrder = { [SETTINGS.tokenHeader]: minted.body.data.customer_token };
    paid = await api('POST', '/orders/' + encodeURIComponent(order.id) + '/pay/saved', { card: card.id, mode: $('mode').value }, asShopper(order.id, forOrder));
    if (!(await followPayment(paid, order.id, 'saved-message', 'payment'))) return;
  } finally {
    savedWorking(false);
  }
  // A removed or expired card is shown for what it is now (with the page's own token: the order's
  // pays that order and does nothing else).
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

`;
