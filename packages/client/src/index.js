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
