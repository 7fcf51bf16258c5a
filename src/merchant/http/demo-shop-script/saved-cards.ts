import type { PublicPaymentAnswer, SavedCard } from '@merchant-kit/client';
import { api, asCustomer, asShopper, problem } from './api.js';
import { $, cardsPath, el, fieldValue, SETTINGS, say } from './page.js';
import { followPayment, orderToPay } from './payment.js';

/** The signed-in customer's saved cards: listed, paid with, removed (with the customer's token). */

interface CardList {
  cards: SavedCard[];
  synced: boolean;
}

let savedBusy = false;

export async function loadSavedCards(): Promise<void> {
  const answer = await api<CardList>('GET', cardsPath(), undefined, asCustomer());
  const box = $('saved');
  // The page's token lapsed (an hour): the list stays as it was, and what was said stays, with how to go on.
  if (answer.body.code === 'CUSTOMER_TOKEN_INVALID') {
    const said = $('saved-message').textContent ?? '';
    const reload = 'Reload the page for a new customer token.';
    if (!said.endsWith(reload)) say('saved-message', (said ? `${said} ` : '') + reload, 'err');
    return;
  }
  const list = answer.body.data;
  if (answer.status !== 200 || !list) {
    box.replaceChildren();
    delete box.dataset.count;
    say('saved-message', `The saved cards could not be read: ${problem(answer)}`, 'err');
    return;
  }
  const { cards, synced } = list;
  box.dataset.count = String(cards.length);
  box.replaceChildren();
  if (cards.length === 0)
    box.append(
      el(
        'p',
        { class: 'hint', id: 'saved-empty' },
        'No saved card yet. Tick "Save this card for next time" when you pay by card.',
      ),
    );
  else box.append(el('table', { class: 'saved' }, el('tbody', {}, ...cards.map(savedRow))));
  // The gateway did not answer: these are the kit's own records, perhaps behind the gateway's.
  if (!synced)
    box.append(el('p', { class: 'hint' }, "The gateway did not answer: the kit's own records are shown."));
}

function savedRow(card: SavedCard): HTMLTableRowElement {
  const label = `${card.brand} \u2022\u2022\u2022\u2022 ${card.last4}`;
  const expiry = `${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`;
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
      el('span', { class: 'hint' }, `expiry ${expiry}`),
      card.expired ? ' ' : null,
      card.expired ? el('span', { class: 'badge tone-bad small' }, 'expired') : null,
    ),
    el('td', {}, el('div', { class: 'actions' }, pay, remove)),
  );
}

/** One saved-card action at a time; its buttons wait meanwhile. False when another is under way. */
function savedWorking(busy: boolean): boolean {
  if (busy && savedBusy) return false;
  savedBusy = busy;
  for (const button of $('saved').querySelectorAll('button')) button.disabled = busy;
  return true;
}

async function payWithSaved(card: SavedCard, label: string): Promise<void> {
  if (!savedWorking(true)) return;
  say('form-message', '');
  try {
    const order = await orderToPay('saved-message');
    if (!order) return;
    say('saved-message', `Paying ${order.reference} with ${label}\u2026`);
    // A token for this order alone, as the shop's server mints one for the customer it signed in.
    const minted = await api<{ customer_token: string }>(
      'POST',
      `/demo-shop/orders/${encodeURIComponent(order.id)}/customer-token`,
    );
    const token = minted.body.data?.customer_token;
    if (minted.status !== 201 || token === undefined) {
      say('saved-message', `No token to pay this order: ${problem(minted)}`, 'err');
      return;
    }
    const forOrder = { [SETTINGS.tokenHeader]: token };
    const paid = await api<PublicPaymentAnswer>(
      'POST',
      `/orders/${encodeURIComponent(order.id)}/pay/saved`,
      { card: card.id, mode: fieldValue('mode') },
      asShopper(order.id, forOrder),
    );
    if (!(await followPayment(paid, order.id, 'saved-message', 'payment'))) return;
  } finally {
    savedWorking(false);
  }
  // A removed or expired card is shown for what it is now (with the page's own token: the order's
  // pays that order and does nothing else).
  await loadSavedCards();
}

async function removeSaved(card: SavedCard, label: string): Promise<void> {
  if (!savedWorking(true)) return;
  try {
    const answer = await api('DELETE', cardsPath(card.id), undefined, asCustomer());
    if (answer.status === 200) say('saved-message', `${label} is removed.`, 'ok');
    else say('saved-message', `${label} could not be removed: ${problem(answer)}`, 'err');
  } finally {
    savedWorking(false);
  }
  await loadSavedCards();
}
