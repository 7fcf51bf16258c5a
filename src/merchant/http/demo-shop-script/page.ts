import type { DemoShopScriptSettings } from './settings.js';

/**
 * The page the script runs in: its settings, its elements (the markup in demo-shop.ts names each id
 * used here), elements with text children only, and its message lines.
 */

/** The settings the server rendered as JSON data (no code is spliced into the script). */
export const SETTINGS = JSON.parse(
  document.getElementById('demo-settings')?.textContent ?? 'null',
) as DemoShopScriptSettings;
export const CUSTOMER = SETTINGS.customer;
const CARDS_PATH = `/customers/${encodeURIComponent(CUSTOMER.id)}/cards`;
/** Platform mode: the kit acts for several merchants, and the form has a picker (`#merchant`). */
export const SEVERAL_MERCHANTS = SETTINGS.merchants.length > 1;

/**
 * The customer's saved cards (or one of them, `cardId`): in platform mode at the picked merchant,
 * whose customer they are (the same id at another merchant is another customer).
 */
export function cardsPath(cardId?: string): string {
  const path = cardId === undefined ? CARDS_PATH : `${CARDS_PATH}/${encodeURIComponent(cardId)}`;
  const merchant = pickedMerchant();
  return merchant === null ? path : `${path}?merchant_id=${merchant}`;
}

/** The merchant picked for the next order (platform mode); null without a picker. */
export function pickedMerchant(): number | null {
  if (!SEVERAL_MERCHANTS) return null;
  const picked = Number((document.getElementById('merchant') as HTMLSelectElement | null)?.value);
  return Number.isInteger(picked) && picked > 0 ? picked : null;
}

/** The page's element with this id, typed as the caller knows it to be (an input, a select...). */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`The demo shop's page has no #${id}`);
  return node as T;
}

/** A form field's current value: an input's or a select's. */
export const fieldValue = (id: string): string => $<HTMLInputElement | HTMLSelectElement>(id).value;

export type Child = Node | string | null | undefined;

/** An element with text children only (strings become text nodes, never markup). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | null | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined) node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

export type Tone = 'ok' | 'err' | 'wait';

/**
 * Says `text` in the message line `id`. `orderId`: the order it is about, kept on the line
 * (`data-order-id`), so that showing another order can clear what was said of this one.
 */
export function say(id: string, text: string, tone?: Tone | '', orderId?: string): void {
  const node = $(id);
  node.textContent = text;
  node.className = `message${tone ? ` ${tone}` : ''}`;
  if (orderId === undefined) delete node.dataset.orderId;
  else node.dataset.orderId = orderId;
}
