/** The demo shop's script, part 5 of 5: the page's controls wired, the first reads, and the script's end. */
export const START = `\
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
