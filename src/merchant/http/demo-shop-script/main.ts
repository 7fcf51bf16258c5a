import { placeAndPay } from './checkout.js';
import { choose, FIELDS, restoreChoices, showKind } from './form.js';
import { loadMethods } from './methods.js';
import { operate, setOperator } from './operator.js';
import { currentOrderId, onOrderShown, showOrder } from './order.js';
import { $, CUSTOMER, say } from './page.js';
import { showPayLabel } from './payment.js';
import { loadQueue } from './review-queue.js';
import { loadSavedCards } from './saved-cards.js';
import { lastOrderId } from './storage.js';

/**
 * The demo shop's script: it calls the kit's own storefront API, as a shop's front end would, and
 * writes what it shows with textContent only (no value from an answer becomes markup). esbuild bundles
 * this entry and the modules it imports into the one file the page loads (demo-shop-script.ts): here
 * the page's controls are wired and the first reads made.
 */

onOrderShown(() => showPayLabel());
onOrderShown(setOperator);

for (const radio of document.querySelectorAll('input[name="kind"]'))
  radio.addEventListener('change', showKind);
showKind();
restoreChoices(
  FIELDS.filter((id) => id !== 'method'),
  true,
);
$('pay-form').addEventListener('submit', placeAndPay);
// Another amount or currency is another purchase: a new order.
for (const id of ['amount', 'currency']) $(id).addEventListener('input', showPayLabel);
// Platform mode: another merchant too, with payment methods of its own, and its own customer's cards.
document.getElementById('merchant')?.addEventListener('change', () => {
  showPayLabel();
  loadMethods();
  loadSavedCards();
});
$('capture').addEventListener('click', () => operate('capture'));
$('void').addEventListener('click', () => operate('void'));
$('refund').addEventListener('click', () => operate('refund'));
$('ops-form').addEventListener('submit', (event) => event.preventDefault());
// The order read again with the token once it is typed (or without, once cleared).
let tokenTyped: ReturnType<typeof setTimeout> | undefined;
$('ops-token').addEventListener('input', () => {
  clearTimeout(tokenTyped);
  tokenTyped = setTimeout(() => {
    say('ops-message', '');
    const shown = currentOrderId();
    if (shown) showOrder(shown, true);
  }, 400);
});
$('queue-form').addEventListener('submit', (event) => {
  event.preventDefault();
  loadQueue(false);
});
for (const row of document.querySelectorAll<HTMLElement>('[data-card]')) {
  row.addEventListener('click', () => {
    choose('card');
    $<HTMLSelectElement>('card').value = row.dataset.card ?? '';
  });
}
$('customer-until').textContent = new Date(CUSTOMER.expires_at).toTimeString().slice(0, 5);
loadMethods();
loadSavedCards();
const last = lastOrderId();
if (last) showOrder(last, true);
