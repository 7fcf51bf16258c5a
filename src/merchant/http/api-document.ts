import { z } from 'zod';
import type { ZodOpenApiResponseObject } from 'zod-openapi';
import {
  type ApiRegistry,
  type ApiRoute,
  documentationOutside,
  documentationRoutes,
  jsonAnswer,
} from '../../shared/api-document.js';
import { retryAfter } from './api-document/common.js';
import { customerRoutes } from './api-document/customers.js';
import { disputeRoutes } from './api-document/disputes.js';
import { auditRoutes, reconciliationRoutes } from './api-document/finance.js';
import { landingRoutes } from './api-document/landings.js';
import { operationRoutes } from './api-document/operations.js';
import { orderEventWebhooks } from './api-document/order-events.js';
import { cancelRoutes, orderRoutes, reviewQueueRoutes } from './api-document/orders.js';
import { paymentLinkRoutes } from './api-document/payment-links.js';
import { paymentRoutes } from './api-document/payments.js';
import { metricsRoutes, receiverAndHealthRoutes } from './api-document/platform.js';
import { signInRoutes } from './api-document/sign-in.js';
import { unmatchedMoneyRoutes } from './api-document/unmatched-money.js';
import { DEMO_SHOP_SCRIPT_PATH } from './demo-shop.js';
import { BOARD_PATH } from './ops-board.js';
import { failure } from './response-schemas.js';

/**
 * The merchant API's OpenAPI document (merchant.md, HTTP interface), served at /openapi.json and
 * /docs. Every route of createMerchantApp has one entry in `routes` below, written with its group
 * under api-document/ (orders, payments, operations, landings, ...; the answers they share in
 * common.ts), and a test fails for a route served without one (or an entry no route serves). Request
 * schemas are the routes' own (schemas.ts); responses are response-schemas.ts.
 *
 * A new route is one entry in its group: `{ method: 'get', path: '/reports/reconciliation',
 * operationId, summary, tags, security: OPS, requestParams: { query: itsQuerySchema }, responses:
 * { 200: jsonAnswer(...), 401: ... } }`; a new group is a module there, spread into `routes`. A
 * third-party UI mounted under a prefix (a queue board) is not the API: add `{ prefix, why }` to
 * `outside` instead.
 */

/**
 * What the kit's HTTP server answers by itself, before the app sees the request
 * (src/infra/http-server.ts): in the envelope, with an X-Request-Id, and the connection closed. Any
 * route may get them: every operation lists them, from one component each.
 */
const serverAnswers = {
  408: {
    ...jsonAnswer(
      '`REQUEST_TIMEOUT`: the request did not arrive whole within `HTTP_REQUEST_TIMEOUT_MS` (its headers, within 10 s); nothing was done.',
      failure(['REQUEST_TIMEOUT']),
    ),
    id: 'RequestTimeout',
  },
  431: {
    ...jsonAnswer(
      '`HEADERS_TOO_LARGE`: the request headers are over 16 KiB; nothing was done.',
      failure(['HEADERS_TOO_LARGE']),
    ),
    id: 'HeadersTooLarge',
  },
};

/**
 * What every route answers while the kit starts (src/infra/http-server.ts: the port is bound before
 * the app is ready): 503 `STARTING` with `Retry-After: 1`, beside the route's own 503 if it has one.
 */
const STARTING =
  '`STARTING`: the kit is starting and took nothing; send the request again after `Retry-After` (1 s).';
const startingSchema = failure(['STARTING']);
function answeredWhileStarting(routes: ApiRoute[]): ApiRoute[] {
  return routes.map((route) => {
    const own = (route.responses as Record<string, ZodOpenApiResponseObject> | undefined)?.['503'];
    const ownJson = own?.content?.['application/json']?.schema;
    const answer: ZodOpenApiResponseObject = own
      ? {
          ...own,
          description: `${own.description} ${STARTING}`,
          content: {
            ...own.content,
            'application/json': {
              schema: ownJson instanceof z.ZodType ? z.union([ownJson, startingSchema]) : startingSchema,
            },
          },
          headers: own.headers ?? retryAfter.partial(),
        }
      : jsonAnswer(STARTING, startingSchema, retryAfter);
    return { ...route, responses: { ...route.responses, 503: answer } };
  });
}

export const merchantApi: ApiRegistry = {
  info: {
    title: 'Merchant payment kit API',
    version: '1',
    description: `The kit's HTTP interface (merchant.md): orders and their payments for the storefront, capture, refund and void for operators, the landings a customer's browser returns to, the gateway's webhook receiver, and health.

Requests carry amounts in major units (\`"12.34"\` or \`12.34\`); answers give minor units with \`*_formatted\` beside. Every answer is the envelope \`{success, message, code, data}\`; errors add \`errors\` (field -> messages) for bad input and \`request_id\`. Every answer carries \`X-Request-Id\` (the caller's, when it sends a plain token). While the kit starts, every request is answered \`503 STARTING\` with \`Retry-After: 1\`; while its database cannot be reached, a request that needs it is answered \`503 UNAVAILABLE\` with \`Retry-After: 5\`; a request not complete within \`HTTP_REQUEST_TIMEOUT_MS\` is answered 408. The public routes have limits per client address (and per order on the payments): over one, \`429 RATE_LIMITED\` with \`Retry-After\` in seconds; a landing over its limit shows the stored order instead.

The order events the kit sends to the shop's endpoints (\`SHOP_WEBHOOK_URLS\`) are this document's webhooks, one a type (\`order.paid\`, \`order.refunded\`, ...): a POST of \`{type, timestamp, data: {order}}\` signed with \`SHOP_WEBHOOK_SECRET\` as the Standard Webhooks specification says, at least once (deduplicate by \`webhook-id\`) and in order per order.`,
  },
  tags: [
    { name: 'Orders', description: 'The storefront creates orders and reads them.' },
    {
      name: 'Payments',
      description: 'The storefront pays for an order: by card, or by redirect to a hosted page.',
    },
    {
      name: 'Operator',
      description:
        'The order list and its review queue; capture, refund and void; reviews resolved; gateway money with no order and disputes. Behind `Authorization: Bearer <token>`, by role.',
    },
    {
      name: 'Customers',
      description:
        "A customer's saved cards, by the shop's own customer id: listed, removed, charged by an operator; the token the shop's server gets for a signed-in customer.",
    },
    { name: 'Browser', description: 'HTML pages a customer lands on.' },
    { name: 'Gateway', description: 'What the gateway calls.' },
    {
      name: 'Finance',
      description: 'The reconciliation report and the audit export, for finance and admin.',
    },
    { name: 'Platform', description: 'Liveness, readiness and metrics.' },
    { name: 'Documentation', description: 'This document.' },
  ],
  securitySchemes: {
    customerToken: {
      type: 'apiKey',
      in: 'header',
      name: 'Customer-Token',
      description:
        "A customer's token (`POST /customers/{id}/tokens`, made by the shop's server for the customer it signed in): good for that customer alone, for an hour.",
    },
    opsToken: {
      type: 'http',
      scheme: 'bearer',
      description:
        "An operator's own token (`kop_...`, from `cli operator add NAME --role operator|finance|viewer`; stored as its SHA-256, refused once revoked), or the kit's `OPS_API_TOKEN` (the bootstrap administrator, role `admin`). Each route's description names the roles that may use it; another role is a 403 `FORBIDDEN`.",
    },
    metricsToken: {
      type: 'http',
      scheme: 'bearer',
      description: '`METRICS_TOKEN`, when it is set: `GET /metrics` alone.',
    },
  },
  serverAnswers,
  outside: [
    documentationOutside,
    {
      prefix: BOARD_PATH,
      why: "the queue board: bull-board's own UI and its API, behind the operator token",
    },
    { prefix: DEMO_SHOP_SCRIPT_PATH, why: "the demo shop's script (outside production only), not an API" },
    {
      prefix: '/demo-shop/',
      why: "the demo shop's own server (outside production only): a token for one of its orders, as a shop's server mints one",
    },
  ],
  routes: answeredWhileStarting([
    // In the document's order: a path's first route places it.
    ...orderRoutes,
    ...paymentRoutes,
    ...operationRoutes,
    ...cancelRoutes,
    ...paymentLinkRoutes,
    ...landingRoutes,
    ...receiverAndHealthRoutes,
    ...reconciliationRoutes,
    ...metricsRoutes,
    ...signInRoutes,
    ...unmatchedMoneyRoutes,
    ...customerRoutes,
    ...disputeRoutes,
    ...reviewQueueRoutes,
    ...auditRoutes,
    ...documentationRoutes('Documentation'),
  ]),
  webhooks: orderEventWebhooks,
};
