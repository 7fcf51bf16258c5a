import type { PaymentMethods } from '@merchant-kit/client';
import { api, problem } from './api.js';
import { restoreChoices } from './form.js';
import { $, el, pickedMerchant } from './page.js';

/** Only the latest list is shown: one asked for another merchant before does not replace it. */
let lists = 0;

/**
 * The payment methods (GET /payment-methods), listed and offered in the form as the page loads; in
 * platform mode the picked merchant's (each has its own), again whenever another is picked.
 */
export async function loadMethods(): Promise<void> {
  const merchant = pickedMerchant();
  const list = ++lists;
  const answer = await api<PaymentMethods>(
    'GET',
    merchant === null ? '/payment-methods' : `/payment-methods?merchant_id=${merchant}`,
  );
  if (list !== lists) return;
  const box = $('methods');
  const select = $<HTMLSelectElement>('method');
  const methods = answer.body.data?.payment_methods ?? [];
  box.replaceChildren();
  select.replaceChildren();
  if (answer.status !== 200) {
    box.append(el('p', { class: 'message err' }, `Could not load the payment methods: ${problem(answer)}`));
    return;
  }
  if (methods.length === 0)
    box.append(el('p', { class: 'hint' }, 'The gateway offers no redirect method to this account.'));
  const items = el('ul', { class: 'methods' });
  for (const m of methods) {
    const where = m.supported_countries.length ? m.supported_countries.join(', ') : 'any country';
    const what = m.supported_currencies.length ? m.supported_currencies.join(', ') : 'any currency';
    items.append(
      el(
        'li',
        { 'data-method': m.payment_method },
        el('strong', {}, m.label),
        ' ',
        el('code', {}, m.payment_method),
        el('br'),
        el('span', { class: 'hint' }, `${where}; ${what}`),
      ),
    );
    select.append(el('option', { value: m.payment_method }, `${m.label} (${m.payment_method})`));
  }
  box.append(items);
  restoreChoices(['method'], false);
}
