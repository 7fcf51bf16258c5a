import createClient from 'openapi-fetch';

/**
 * The kit's API as a typed client: openapi-fetch over the types generated from the kit's OpenAPI
 * document. A `token` goes in every request as `Authorization: Bearer <token>`: the routes behind
 * one (capture, refund, void, the customers' tokens) need it, the others ignore it.
 *
 * @param {import('./index.js').KitClientOptions} options
 * @returns {import('./index.js').KitClient}
 */
export function createKitClient({ token, headers, ...options }) {
  const bearer = token ? { Authorization: `Bearer ${token}` } : {};
  return createClient({ ...options, headers: { ...headers, ...bearer } });
}
