import { type ApiRegistry, documentationOutside, documentationRoutes } from '../../shared/api-document.js';
import { apiKeyRoutes } from './api-document/api-key.js';
import { controlRoutes } from './api-document/controls.js';
import { hostedRoutes } from './api-document/hosted.js';
import { paymentRoutes } from './api-document/payments.js';
import { sessionRoutes } from './api-document/sessions.js';
import { webhookRoutes } from './api-document/webhooks.js';

/**
 * The sandbox gateway's OpenAPI document (gateway-api.md, with sandbox.md's decisions), served at its
 * /openapi.json and /docs. Every route of createGateway has one entry in `routes` below, written with
 * its group under api-document/ (payments, sessions, webhooks, the API key, the hosted pages, the
 * sandbox's controls; the answers they share in common.ts), and a test fails for a route served
 * without one (or an entry no route serves). Request schemas are the routes' own; responses are
 * response-schemas.ts.
 */

/**
 * What Node's HTTP server answers by itself, before the app sees the request (the sandbox keeps
 * Node's defaults): no body, and the connection closed. Any route may get them.
 */
const serverAnswers = {
  408: {
    description:
      "The request did not arrive whole within 5 minutes (its headers, within a minute): Node's own answer, with no body.",
    id: 'RequestTimeout',
  },
  431: {
    description: "The request headers are over 16 KiB: Node's own answer, with no body.",
    id: 'HeadersTooLarge',
  },
};

export const gatewayApi: ApiRegistry = {
  info: {
    title: 'Sandbox payment gateway API',
    version: 'v1',
    description: `The sandbox's implementation of gateway-api.md, with the decisions of sandbox.md: card payments with 3D Secure, capture, refund and void, hosted redirect sessions, payment methods, and webhook management; plus the hosted pages and the sandbox's own controls (\`/sandbox/*\`, marked \`x-sandbox-only\`: a real gateway has none of them).

Every call of \`/api/v1\` sends \`Authorization: Bearer <API_KEY>\`. Request amounts are major units; answers give minor units. Every answer is the envelope \`{success, message, code, data}\` (\`errors\` on validation failures) and carries \`X-RateLimit-Remaining\`; an unknown path is \`404 ERR_NOT_FOUND\`.`,
  },
  tags: [
    { name: 'Card verification', description: '3D Secure.' },
    { name: 'Transactions', description: 'Sale and auth, then capture, refund and void.' },
    {
      name: 'Payment instruments',
      description:
        'Cards on file: saved by an approved payment with `save_payment_instrument`, paid with by `vault_token` (sandbox.md section 11).',
    },
    { name: 'Payment sessions', description: 'Hosted redirect payments, and the methods on offer.' },
    {
      name: 'Webhooks',
      description: "The merchant's endpoint, its events and their deliveries. Scope `webhooks:manage`.",
    },
    { name: 'API key', description: 'The calling key: its merchant or linked merchants, scopes and limits.' },
    {
      name: 'Hosted pages',
      description:
        "The browser's pages: the 3DS challenge and the checkout (the sandbox's stand-ins for the issuer's and the provider's).",
    },
    {
      name: 'Sandbox controls',
      description:
        'Sandbox only (`x-sandbox-only`): read and move the clock, run due work, settle, charge back and reverse, fail deliveries.',
    },
    { name: 'Documentation', description: 'This document.' },
  ],
  securitySchemes: {
    apiKey: {
      type: 'http',
      scheme: 'bearer',
      description: "A merchant or partner API key (the seed's, e.g. `sk_test_merchant_1001`).",
    },
  },
  serverAnswers,
  outside: [documentationOutside],
  routes: [
    // In the document's order: a path's first route places it.
    ...paymentRoutes,
    ...sessionRoutes,
    ...webhookRoutes,
    ...apiKeyRoutes,
    ...hostedRoutes,
    ...controlRoutes,
    ...documentationRoutes('Documentation'),
  ],
};
