import { $, fieldValue } from './page.js';
import { keepChoices, storedChoices } from './storage.js';

/**
 * The order form: how the shopper pays (card or redirect), and its choices kept as they were last
 * sent, so that coming back from a payment page keeps them.
 */

/** `merchant`: the picker, on a page of a kit that acts for several merchants only. */
export const FIELDS = ['merchant', 'amount', 'currency', 'card', 'mode', 'method', 'country'] as const;
export type Field = (typeof FIELDS)[number];

/** Whether the page has this field (the merchant picker is there in platform mode only). */
const present = (id: Field) => document.getElementById(id) !== null;

export type PayKind = 'card' | 'redirect';

const kindRadio = (kind: PayKind) =>
  document.querySelector<HTMLInputElement>(`input[name="kind"][value="${kind}"]`);

export function payKind(): PayKind {
  return document.querySelector<HTMLInputElement>('input[name="kind"]:checked')?.value === 'redirect'
    ? 'redirect'
    : 'card';
}

export function showKind(): void {
  const card = payKind() === 'card';
  $('card-fields').hidden = !card;
  $('redirect-fields').hidden = card;
}

/** Pays by `kind`: its radio checked, and its fields shown. */
export function choose(kind: PayKind): void {
  const radio = kindRadio(kind);
  if (radio) radio.checked = true;
  showKind();
}

/** The form as it is sent. */
export function saveChoices(): void {
  const choices: Record<string, string> = { kind: payKind() };
  for (const id of FIELDS.filter(present)) choices[id] = fieldValue(id);
  keepChoices(choices);
}

/** The fields `ids` as they were last sent, and (`kindToo`) how the shopper paid. */
export function restoreChoices(ids: readonly Field[], kindToo: boolean): void {
  const choices = storedChoices();
  if (!choices) return;
  for (const id of ids.filter(present)) {
    const field = $<HTMLInputElement | HTMLSelectElement>(id);
    const chosen = choices[id];
    // A select keeps its value only when it has that option: a stale choice leaves the default.
    if (
      typeof chosen === 'string' &&
      (!(field instanceof HTMLSelectElement) || [...field.options].some((o) => o.value === chosen))
    )
      field.value = chosen;
  }
  if (kindToo) choose(choices.kind === 'redirect' ? 'redirect' : 'card');
}
