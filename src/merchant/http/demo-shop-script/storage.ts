/**
 * What this browser remembers between visits (localStorage): the last order shown, the orders it
 * placed for its customer (and whether a payment of each was started), each one's client secret, and
 * the form's choices. Storage may be refused (a private window, a full quota): then nothing is kept,
 * and the page works as on a first visit.
 */

const LAST_ORDER = 'demo-shop:last-order';
const CHOICES = 'demo-shop:choices';
/**
 * The orders this page placed for its customer, with whether a payment of each was started: GET
 * /orders/{id} shows anyone holding the id the status and amounts only, not whose order it is.
 */
const OWN_ORDERS = 'demo-shop:own-orders';
/**
 * Each order's client secret, as POST /orders answered it (once; no read shows it again): the
 * shopper's reads and payments of the order send it, or the kit answers 404, as for no order at all.
 */
const ORDER_SECRETS = 'demo-shop:order-secrets';
/** How many orders (and secrets) are kept: the newest. */
const OWN_KEPT = 20;

function store(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {}
}

export function remember(id: string): void {
  store(LAST_ORDER, id);
}

/** The last order is not known to the kit any more: not shown again on the next visit. */
export function forgetLast(): void {
  try {
    localStorage.removeItem(LAST_ORDER);
  } catch {}
}

/** The order to show as the page opens: the one the address names (`?order=`), else the last one shown. */
export function lastOrderId(): string | null {
  const fromQuery = new URLSearchParams(location.search).get('order');
  if (fromQuery) return fromQuery;
  try {
    return localStorage.getItem(LAST_ORDER);
  } catch {
    return null;
  }
}

/** An object kept under key in localStorage; {} when there is none, or what is there is not one. */
function storedObject(key: string): Record<string, unknown> {
  try {
    const kept: unknown = JSON.parse(localStorage.getItem(key) || '{}');
    return kept && typeof kept === 'object' && !Array.isArray(kept) ? (kept as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** `value` kept under `id` in the object at `key`, as its newest entry; the oldest past OWN_KEPT dropped. */
function keepNewest(key: string, id: string, value: unknown): void {
  const kept = storedObject(key);
  delete kept[id];
  kept[id] = value;
  for (const old of Object.keys(kept).slice(0, -OWN_KEPT)) delete kept[old];
  store(key, JSON.stringify(kept));
}

/** { [order id]: { paying, merchant } } of the orders placed here, oldest first. */
function ownOrders(): Record<string, { paying?: unknown; merchant?: unknown } | undefined> {
  return storedObject(OWN_ORDERS) as Record<string, { paying?: unknown; merchant?: unknown } | undefined>;
}

/** An order placed here: whether its payment started, and (platform mode) the merchant it is for. */
export function keepOwn(id: string, paying: boolean, merchant?: number): void {
  const kept = ownOrders()[id];
  keepNewest(OWN_ORDERS, id, { ...kept, paying, ...(merchant === undefined ? {} : { merchant }) });
}

/**
 * The merchant an order placed here is for (platform mode): what the shopper's view of it does not
 * say. Null for an order placed elsewhere, or by a page without the picker.
 */
export function ownMerchant(id: string): number | null {
  const merchant = ownOrders()[id]?.merchant;
  return typeof merchant === 'number' ? merchant : null;
}

export const isOwn = (id: string): boolean => Object.hasOwn(ownOrders(), id);

/** Whether a payment of an order placed here was started (its answer may have been lost). */
export const paying = (id: string): boolean => isOwn(id) && ownOrders()[id]?.paying === true;

export function keepSecret(id: string, secret: unknown): void {
  if (typeof secret === 'string') keepNewest(ORDER_SECRETS, id, secret);
}

/** The order's client secret, when this browser holds it. */
export function secretOf(id: string): string | null {
  const secret = storedObject(ORDER_SECRETS)[id];
  return typeof secret === 'string' ? secret : null;
}

/** The form's choices as they were last sent (form.ts). */
export function storedChoices(): Record<string, unknown> | null {
  try {
    const choices: unknown = JSON.parse(localStorage.getItem(CHOICES) || 'null');
    return choices && typeof choices === 'object' ? (choices as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function keepChoices(choices: Record<string, string>): void {
  store(CHOICES, JSON.stringify(choices));
}
