import createClient from 'openapi-fetch';

/**
 * The kit's API as a typed client: openapi-fetch over the types generated from the kit's OpenAPI
 * document. A `token` goes in every request as `Authorization: Bearer <token>`: the routes behind
 * one (capture, refund, void, the customers' tokens) need it, most others ignore it. `GET /orders/{id}`
 * reads it: no token, the order's public view (with its `Order-Secret` header); a reader's, the whole
 * order; any other, a 401 or 403. A storefront reads orders with a client made without one, sending
 * each order's secret (`POST /orders` answered it) as that header parameter.
 *
 * @param {import('./index.js').KitClientOptions} options
 * @returns {import('./index.js').KitClient}
 */
export function createKitClient({ token, headers, ...options }) {
  const bearer = token ? { Authorization: `Bearer ${token}` } : {};
  return createClient({ ...options, headers: { ...headers, ...bearer } });
}

/**
 * Each type of the document's webhooks once: the compiler checks this against the generated types
 * (`npm run typecheck`), so a type added to the document and not here fails it.
 *
 * @type {{ [Type in import('./index.js').OrderEventType]: true }}
 */
const TYPES = {
  'order.authorized': true,
  'order.paid': true,
  'order.partially_refunded': true,
  'order.refunded': true,
  'order.voided': true,
  'order.failed': true,
  'order.cancelled': true,
  'order.expired': true,
  'order.disputed': true,
  'order.dispute_won': true,
  'order.needs_review': true,
  'order.closed': true,
};

/** @type {readonly import('./index.js').OrderEventType[]} */
export const ORDER_EVENT_TYPES = Object.freeze(
  /** @type {import('./index.js').OrderEventType[]} */ (Object.keys(TYPES)),
);

/**
 * @param {unknown} value
 * @returns {value is import('./index.js').OrderEvent}
 */
export function isOrderEvent(value) {
  if (typeof value !== 'object' || value === null) return false;
  const { type, timestamp, data } = /** @type {Record<string, unknown>} */ (value);
  return (
    typeof type === 'string' &&
    Object.hasOwn(TYPES, type) &&
    typeof timestamp === 'string' &&
    typeof data === 'object' &&
    data !== null &&
    typeof (/** @type {Record<string, unknown>} */ (data).order) === 'object'
  );
}
