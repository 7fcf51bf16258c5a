import { z } from 'zod';
import type { ZodOpenApiResponseObject } from 'zod-openapi';
import { eventPayloadSchema } from '../../client/schemas.js';
import { LIMIT_NAMES } from '../../infra/rate-limits.js';
import {
  type ApiRegistry,
  type ApiRoute,
  documentationOutside,
  documentationRoutes,
  htmlAnswer,
  jsonAnswer,
} from '../../shared/api-document.js';
import { DEMO_SHOP_SCRIPT_PATH } from './demo-shop.js';
import { BOARD_PATH } from './ops-board.js';
import { reportQuerySchema } from './report-routes.js';
import {
  auditSchema,
  customerTokenSchema,
  disputeSchema,
  failure,
  forbiddenSchema,
  invalidStateSchema,
  operationAnswerSchema,
  orderListSchema,
  orderSchema,
  orderWithHistorySchema,
  paymentAnswerSchema,
  paymentInvalidStateSchema,
  paymentMethodsSchema,
  publicOrderSchema,
  publicPaymentAnswerSchema,
  reportSchema,
  savedCardSchema,
  success,
  unmatchedMoneySchema,
} from './response-schemas.js';
import {
  attachSchema,
  auditQuerySchema,
  captureSchema,
  chargeSchema,
  createOrderSchema,
  disputeListQuerySchema,
  loseDisputeSchema,
  methodsQuerySchema,
  orderListQuerySchema,
  payCardSchema,
  payRedirectSchema,
  paySavedSchema,
  refundSchema,
  resolveSchema,
  reviewSchema,
  unmatchedListQuerySchema,
  voidSchema,
} from './schemas.js';

/**
 * The merchant API's OpenAPI document (merchant.md, HTTP interface), served at /openapi.json and
 * /docs. Every route of createMerchantApp has one entry in `routes` below, and a test fails for a
 * route served without one (or an entry no route serves). Request schemas are the routes' own
 * (schemas.ts); responses are response-schemas.ts.
 *
 * A new route is one entry: `{ method: 'get', path: '/reports/reconciliation', operationId, summary,
 * tags, security: OPS, requestParams: { query: itsQuerySchema }, responses: { 200: jsonAnswer(...),
 * 401: ... } }`. A third-party UI mounted under a prefix (a queue board) is not the API: add
 * `{ prefix, why }` to `outside` instead.
 */

/**
 * A JSON body; `example` is what Swagger UI shows and fills in (a test checks it against the schema).
 * Required when the schema refuses `{}`, which is what the kit reads from no body at all (jsonBody):
 * a client must send one, and a typed client's types say so.
 */
const json = (schema: z.ZodType, example?: unknown) => ({
  ...(schema.safeParse({}).success ? {} : { required: true }),
  content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
});
const TEST_CARD = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' };
const orderPath = z.object({ id: z.string().meta({ description: 'The order id (`ord_...`).' }) });
const retryAfter = z.object({
  'Retry-After': z.string().meta({ description: 'Seconds to wait before sending the same request again.' }),
});
const OPS = [{ opsToken: [] }];
/** The customer's own token, or (where the route says) an operator's. */
const CUSTOMER: Record<string, string[]>[] = [{ customerToken: [] }];
const CUSTOMER_OR_OPS: Record<string, string[]>[] = [{ customerToken: [] }, { opsToken: [] }];
/** Only with `save_card`: none otherwise. */
const CUSTOMER_TO_SAVE: Record<string, string[]>[] = [{}, { customerToken: [] }];
const customerPath = z.object({
  id: z.string().meta({ description: "The shop's own id for the customer (`merchant_customer_id`)." }),
});
const savedCardPath = customerPath.extend({
  card: z.string().meta({ description: 'The saved card (`card_...`).' }),
});
const customerUnauthorized = {
  401: jsonAnswer(
    "`CUSTOMER_TOKEN_REQUIRED`: no `Customer-Token` header; `CUSTOMER_TOKEN_INVALID`: the token is not this customer's, or has expired (an hour after it was made). `UNAUTHORIZED`: an operator's bearer token nobody holds.",
    failure(['CUSTOMER_TOKEN_REQUIRED', 'CUSTOMER_TOKEN_INVALID', 'UNAUTHORIZED']),
  ),
};
/** `/customers//cards`: no route matches an empty customer id. */
const emptyCustomer = '`NOT_FOUND`: an empty customer id (no such path).';
const noCustomer = { 404: jsonAnswer(emptyCustomer, failure(['NOT_FOUND'])) };
const cardNotFound =
  "`CARD_NOT_FOUND`: the customer has no saved card with this id (another customer's card is none of theirs; `errors.card`).";

// Answers many routes share. Every answer also carries the X-Request-Id header (see the description).
const internal = {
  500: jsonAnswer('`INTERNAL`: an unexpected error; nothing inside is shown.', failure(['INTERNAL'])),
};
const databaseDown = {
  503: jsonAnswer(
    '`UNAVAILABLE`: the database cannot be reached; nothing was done. Retry after `Retry-After` seconds.',
    failure(['UNAVAILABLE']),
    retryAfter,
  ),
};
const unreadable = {
  400: jsonAnswer('`BAD_REQUEST`: the body could not be read.', failure(['BAD_REQUEST'])),
  413: jsonAnswer('`VALIDATION_FAILED`: the body is over 64 KiB.', failure(['VALIDATION_FAILED'])),
};
const invalidInput = jsonAnswer(
  '`VALIDATION_FAILED`: `errors` names each field and what is wrong with it.',
  failure(['VALIDATION_FAILED']),
);
const gatewayCode = z
  .object({ gateway_code: z.string().meta({ description: "The gateway's own error code." }) })
  .nullable();
/** A gateway call passed through as it is (the payment-methods list). */
const gatewayFailed = {
  502: jsonAnswer(
    "`GATEWAY_ERROR`: the gateway refused the kit's request (a revoked key, a missing scope): the operator's to fix, not the caller's.",
    failure(['GATEWAY_ERROR'], gatewayCode),
  ),
  503: jsonAnswer(
    "`GATEWAY_UNAVAILABLE`: the gateway did not answer, failed, or slowed the key down; `GATEWAY_BUSY`: the API key's budget for checkout traffic is spent for now (nothing was sent). Try again (after `Retry-After` when given).",
    failure(['GATEWAY_UNAVAILABLE', 'GATEWAY_BUSY'], gatewayCode),
    retryAfter.partial(),
  ),
};
const limitedSchema = z
  .object({
    limit: z
      .enum(LIMIT_NAMES)
      .meta({ description: 'The limit spent: its setting is `LIMIT_<LIMIT>` (README, Limits).' }),
    retry_after: z.number().int().min(1).meta({ description: 'Seconds, as `Retry-After` says.' }),
  })
  .meta({ id: 'RateLimited', description: 'Which limit turned the request away, and for how long.' });
/** A limit on the public routes (README, Limits): `which` says what it counts. */
const rateLimited = (which: string) => ({
  429: jsonAnswer(
    `\`RATE_LIMITED\`: ${which} (\`data.limit\` names the one spent; each is a setting). Nothing was done; send the request again after \`Retry-After\` seconds.`,
    failure(['RATE_LIMITED'], limitedSchema),
    retryAfter,
  ),
});
const orderNotFound = { 404: jsonAnswer('`NOT_FOUND`: no order has this id.', failure(['NOT_FOUND'])) };
const unmatchedPath = z.object({
  id: z.string().meta({ description: 'The id of the gateway money with no order (`umn_...`).' }),
});
const unmatchedNotFound = {
  404: jsonAnswer(
    '`NOT_FOUND`: no gateway money with no order has this id (`errors.id`).',
    failure(['NOT_FOUND']),
  ),
};
const unmatchedStateSchema = z
  .object({ resolution: z.enum(['open', 'attached', 'resolved']), allowed: z.array(z.literal('open')) })
  .meta({
    id: 'UnmatchedState',
    description: "The money's resolution and the one the action is allowed from.",
  });
const disputePath = z.object({ id: z.string().meta({ description: 'The dispute id (`dsp_...`).' }) });
const disputeStateSchema = z
  .object({ outcome: z.enum(['open', 'won', 'lost']), allowed: z.array(z.literal('open')) })
  .meta({ id: 'DisputeState', description: "The dispute's outcome and the one the action is allowed from." });
const disputedSchema = z
  .object({ status: z.literal('disputed'), disputed_amount: z.number().int() })
  .meta({ id: 'Disputed', description: 'The order is disputed: what the chargeback took, in minor units.' });
const unauthorized = {
  401: jsonAnswer(
    "`UNAUTHORIZED`: no `Authorization: Bearer <token>`, or a token nobody holds (unknown, or revoked): an operator's own token or OPS_API_TOKEN.",
    failure(['UNAUTHORIZED']),
  ),
};
/** A route some roles may not use: the roles that may are in its description and in the 403. */
const forbidden = {
  403: jsonAnswer(
    "`FORBIDDEN`: the token is good, but its role may not do this; `data` the token's role and the roles that may.",
    failure(['FORBIDDEN'], forbiddenSchema),
  ),
};
/** `by`, as every operator's decision takes it. */
const BY =
  " `by` (optional): with OPS_API_TOKEN, the name of the person behind it (default `admin`); with an operator's own token, their name is the token's, and a `by` naming anyone else is a 422.";

/** The two ways to pay answer alike: card (3DS, then the transaction) and redirect (a hosted session). */
function payment(
  path: string,
  operationId: string,
  summary: string,
  description: string,
  body: z.ZodType,
  example: unknown,
  extra: ApiRoute['responses'] = {},
  security?: Record<string, string[]>[],
) {
  return {
    method: 'post',
    path,
    operationId,
    summary,
    // Anyone holding an order's id may pay it: the answers show what that id shows without a token.
    description: `${description} The answers show the order's public view (\`PublicOrder\`), as \`GET /orders/{id}\` without a token does.`,
    tags: ['Payments'],
    requestParams: { path: orderPath },
    requestBody: json(body, example),
    responses: {
      200: jsonAnswer(
        'The payment is decided (`next_action` null) or waits for the customer (`next_action`: the page to send them to).',
        success(publicPaymentAnswerSchema),
      ),
      202: jsonAnswer(
        "The outcome is not known yet (the gateway did not answer, or the kit could not record its answer): the order stays `pending`, and the webhook, a poll or the customer's next try (which the gateway answers by naming the payment it holds) lands it.",
        success(publicPaymentAnswerSchema),
      ),
      402: jsonAnswer(
        "Declined, with the gateway's code (`ERR_CARD_DO_NOT_HONOR`, `ERR_3DS_FAILED`, `ERR_3DS_TIMEOUT`, `ERR_PROVIDER_REJECTED`, ...); the order is `failed` and a new attempt may follow.",
        failure('gateway', publicPaymentAnswerSchema),
      ),
      ...orderNotFound,
      409: jsonAnswer(
        "`INVALID_STATE`: the order is past paying for (paid, refunded, ...; `data` the status, those allowed and the order as it stands: a second press of Pay finds the first one's payment). `PAYMENT_IN_PROGRESS`: the gateway holds a payment for this order that is still pending, or whose status it could not tell now (a payment whose answer was lost, met again as the gateway's `ERR_DUPLICATE`), or another payment of this order has been under way for 20 s (a second press of Pay waits for the first; nothing was started); `data` the order, still `pending` or `requires_action`, never `failed`. Try again after `Retry-After` seconds, or show the order: the webhook and the poller settle it. `TOO_MANY_ATTEMPTS`: the order has had `MAX_FAILED_ATTEMPTS_PER_ORDER` failed payment attempts (declines; a gateway that was down or busy does not count) and takes no more: a new order is needed; `data` the count and the cap.",
        failure(
          ['INVALID_STATE', 'PAYMENT_IN_PROGRESS', 'TOO_MANY_ATTEMPTS'],
          z.union([paymentInvalidStateSchema, publicPaymentAnswerSchema, tooManyAttemptsSchema]),
        ),
        z.object({
          'Retry-After': z
            .string()
            .optional()
            .meta({ description: 'With `PAYMENT_IN_PROGRESS`: seconds to wait before asking again.' }),
        }),
      ),
      422: jsonAnswer(
        "`VALIDATION_FAILED` (the request; `data` null), or the gateway's code for input it refused before anything existed there (`ERR_PAYMENT_METHOD_NOT_ENABLED`, `ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY`, `ERR_INVALID_CURRENCY`, `ERR_INVALID_ACCOUNT_NUMBER` for a card number failing its check digit, `ERR_EXPIRED_CARD` for an expiry in the past, ...; `data` the order, as it was). `errors` names the field.",
        failure('gateway', publicPaymentAnswerSchema.nullable()),
      ),
      ...rateLimited(
        'too many payment requests from this client address (`pay_per_address`) or for this order (`pay_per_order`)',
      ),
      503: jsonAnswer(
        "The gateway is not available (`GATEWAY_UNAVAILABLE`, or the gateway's own code), or the API key's budget for checkout traffic is spent for now (`GATEWAY_BUSY`): nothing was charged; the order is `failed` (an attempt that does not count toward `TOO_MANY_ATTEMPTS`) and the customer may try again after `Retry-After` seconds.",
        failure('gateway', publicPaymentAnswerSchema),
        retryAfter,
      ),
      ...unreadable,
      ...internal,
      ...extra,
    },
    ...(security ? { security } : {}),
  } satisfies ApiRoute;
}

const tooManyAttemptsSchema = z
  .object({
    failed_attempts: z.number().int().meta({ description: "The order's failed attempts that count." }),
    limit: z.number().int().meta({ description: 'MAX_FAILED_ATTEMPTS_PER_ORDER.' }),
  })
  .meta({ id: 'TooManyAttempts', description: 'The order takes no more payment attempts.' });

/** Capture, refund and void: the operator's, behind the token, safe to retry with an Idempotency-Key. */
function operation(
  name: 'capture' | 'refund' | 'void',
  summary: string,
  description: string,
  body: z.ZodType,
  example: unknown,
  keyRequired: boolean,
) {
  const key = z
    .string()
    .min(1)
    .max(255)
    .meta({
      description: keyRequired
        ? 'Required: the same key makes a retry return the first answer, and never refund twice.'
        : 'The same key makes a retry return the first answer. Without one, the kit derives a key from the payment and the amount.',
    });
  return {
    method: 'post',
    path: `/orders/{id}/${name}`,
    operationId: `${name}Order`,
    summary,
    description: `${description} Roles: operator, admin. The order's history gets a line (\`requested\`) naming who asked and why, and the audit log a line.${BY}`,
    tags: ['Operator'],
    security: OPS,
    requestParams: {
      path: orderPath,
      header: z.object({ 'Idempotency-Key': keyRequired ? key : key.optional() }),
    },
    requestBody: json(body, example),
    responses: {
      200: jsonAnswer('Done at the gateway; `order` shows the result.', success(operationAnswerSchema)),
      ...unauthorized,
      ...forbidden,
      ...orderNotFound,
      409: jsonAnswer(
        "`INVALID_STATE` (the order's status does not allow it; `data` the status and those allowed), `IDEMPOTENCY_CONFLICT` (the key was used for another request), `EARLIER_REQUEST_SETTLED` (an earlier request of this kind under another key had no answer: it was settled first with its own key and this one not made; `data` the order and that operation; send this again if you mean another), `REFUND_NOT_SUPPORTED` (the payment's method takes no refunds: nothing was refunded, the order is unchanged, its history says so), `ORDER_DISPUTED` (a refund of a charged-back payment: the bank took the money back already, so nothing was refunded; `data` the status and the disputed amount), or the gateway's refusal (`ERR_INVALID_TRANSACTION`, ...; `data` the order and the operation).",
        failure('gateway', z.union([invalidStateSchema, operationAnswerSchema, disputedSchema, z.null()])),
      ),
      422: jsonAnswer(
        `\`VALIDATION_FAILED\`${keyRequired ? ' (a missing `Idempotency-Key` too)' : ''}, or \`ERR_ADAPTER_INVALID_AMOUNT\` from the gateway (\`data\` the order and the operation).`,
        failure(['VALIDATION_FAILED', 'ERR_ADAPTER_INVALID_AMOUNT'], operationAnswerSchema.nullable()),
      ),
      503: jsonAnswer(
        '`OUTCOME_UNKNOWN`: the gateway did not answer. Send the same request with the same Idempotency-Key again.',
        failure(['OUTCOME_UNKNOWN'], operationAnswerSchema),
        retryAfter,
      ),
      ...unreadable,
      ...internal,
    },
  } satisfies ApiRoute;
}

/** The landings read their query directly (no schema in the route): these say what they read. */
const refreshes = z
  .string()
  .regex(/^\d{1,3}$/)
  .optional()
  .meta({ description: 'How many times the page has reloaded itself (it adds this); at most 10 reloads.' });
const sessionLandingQuery = z.object({
  payment_session_id: z.string().optional().meta({ description: "The gateway's payment session id." }),
  reference: z.string().optional().meta({ description: 'Sent by the gateway; not read.' }),
  status: z
    .string()
    .optional()
    .meta({ description: 'Sent by the gateway; never trusted: the page asks the gateway.' }),
  n: refreshes,
});
const landingAnswers = {
  200: htmlAnswer(
    'Where the payment stands, in words; reloads itself every 3 s while it is being confirmed. Past its limits (`LIMIT_LANDING_PER_ADDRESS`, `LIMIT_LANDING_PER_ORDER`) the page still answers, with the order as stored, without asking the gateway: never a 429.',
  ),
  404: htmlAnswer('No payment has this id: a page that says so.'),
};

function sessionLanding(name: 'return' | 'cancel', summary: string): ApiRoute {
  return {
    method: 'get',
    path: `/checkout/${name}`,
    operationId: `checkout${name === 'return' ? 'Return' : 'Cancel'}Landing`,
    summary,
    description: `The payment session's \`${name === 'return' ? 'success_url' : 'cancel_url'}\`. It decides nothing from the query: it asks the gateway while the order is open and shows the order.`,
    tags: ['Browser'],
    requestParams: { query: sessionLandingQuery },
    responses: landingAnswers,
  };
}

const dependency = z
  .enum(['ok', 'unavailable'])
  .meta({ description: "`ok`, or `unavailable` (why is in the kit's log, not in the answer)." });
const readiness = z
  .object({
    database: dependency,
    redis: dependency,
    gateway: dependency,
    gateway_key: z
      .object({
        key_type: z.enum(['merchant', 'partner']).nullable(),
        merchant_id: z.number().int().nullable(),
        scopes: z.array(z.string()).nullable(),
      })
      .meta({
        description:
          'The gateway API key as start-up read it (`GET /api/v1/api-key`): its type, the merchant the kit acts for and its scopes; null where the gateway did not describe it.',
      }),
  })
  .meta({ description: 'Each dependency, and what start-up learnt of the gateway key.' });

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

Requests carry amounts in major units (\`"12.34"\` or \`12.34\`); answers give minor units with \`*_formatted\` beside. Every answer is the envelope \`{success, message, code, data}\`; errors add \`errors\` (field -> messages) for bad input and \`request_id\`. Every answer carries \`X-Request-Id\` (the caller's, when it sends a plain token). While the kit starts, every request is answered \`503 STARTING\` with \`Retry-After: 1\`; while its database cannot be reached, a request that needs it is answered \`503 UNAVAILABLE\` with \`Retry-After: 5\`; a request not complete within \`HTTP_REQUEST_TIMEOUT_MS\` is answered 408. The public routes have limits per client address (and per order on the payments): over one, \`429 RATE_LIMITED\` with \`Retry-After\` in seconds; a landing over its limit shows the stored order instead.`,
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
  },
  outside: [
    documentationOutside,
    {
      prefix: BOARD_PATH,
      why: "the queue board: bull-board's own UI and its API, behind the operator token",
    },
    { prefix: DEMO_SHOP_SCRIPT_PATH, why: "the demo shop's script (outside production only), not an API" },
  ],
  routes: answeredWhileStarting([
    {
      method: 'post',
      path: '/orders',
      operationId: 'createOrder',
      summary: 'Create an order',
      description:
        "An order in a currency the shop takes (`ORDER_CURRENCIES`) and at most `ORDER_MAX_AMOUNT`, made by anyone. Its `reference` is unique; without one the kit makes one (the order's id). A `reference` of the caller's own needs the storefront's or an operator's token (`Authorization: Bearer`): otherwise a stranger could take the shop's next reference first.",
      tags: ['Orders'],
      security: [{}, { opsToken: [] }],
      requestBody: json(createOrderSchema, {
        amount: '12.34',
        currency: 'EUR',
        reference: 'shop-order-1001',
        customer: { email: 'ada@example.com', country_code: 'GB' },
      }),
      responses: {
        201: jsonAnswer('Created: `pending`.', success(z.object({ order: orderSchema }))),
        401: jsonAnswer(
          '`UNAUTHORIZED`: a `reference` was given without a token, or with a token nobody holds.',
          failure(['UNAUTHORIZED']),
        ),
        ...forbidden,
        409: jsonAnswer(
          '`DUPLICATE_REFERENCE`: another order has this reference (`errors.reference`).',
          failure(['DUPLICATE_REFERENCE']),
        ),
        422: invalidInput,
        ...rateLimited('too many orders from this client address (`orders_per_address`)'),
        ...unreadable,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'get',
      path: '/orders/{id}',
      operationId: 'getOrder',
      summary: 'Read an order: its status, or (operators) everything with its history',
      description:
        "Without `Authorization`, anyone holding the order id (the storefront, the shopper's browser) reads its public view (`PublicOrder`): status, amounts, and `next_action` while it waits on the shopper. With `Authorization: Bearer <token>` of a role that may read (viewer, finance, operator, admin), the whole order (`OrderWithHistory`): the customer, the description, the payment, the review, every observation of it and its disputes. A token that is sent must be good: a wrong one is a 401, never the public view; a `storefront` role's is a 403. Both answers carry `Vary: Authorization` and `Cache-Control: no-store`.",
      tags: ['Orders'],
      security: [{}, { opsToken: [] }],
      requestParams: { path: orderPath },
      responses: {
        200: jsonAnswer(
          "Without a token, `PublicOrder`; with a reader's token, `OrderWithHistory`.",
          success(z.object({ order: z.union([publicOrderSchema, orderWithHistorySchema]) })),
          z.object({
            Vary: z.string().meta({ description: '`Authorization`: the answer depends on the token.' }),
            'Cache-Control': z.string().meta({ description: '`no-store`.' }),
          }),
        ),
        ...unauthorized,
        ...forbidden,
        ...orderNotFound,
        ...databaseDown,
        ...internal,
      },
    },
    payment(
      '/orders/{id}/pay/card',
      'payByCard',
      'Pay by card',
      '3D Secure first, then the transaction (`mode` `sale` captures at once, `auth` waits for a capture). A challenge answers 200 with `next_action`: the challenge page, which returns to `/checkout/3ds-return`. Card data is passed to the gateway and kept nowhere.',
      payCardSchema,
      { card: TEST_CARD, mode: 'auth' },
      {
        401: jsonAnswer(
          "With `save_card: true` only: `CUSTOMER_TOKEN_REQUIRED` or `CUSTOMER_TOKEN_INVALID`, the order's customer's `Customer-Token` is missing or not theirs. Nothing was charged.",
          failure(['CUSTOMER_TOKEN_REQUIRED', 'CUSTOMER_TOKEN_INVALID']),
        ),
      },
      CUSTOMER_TO_SAVE,
    ),
    payment(
      '/orders/{id}/pay/saved',
      'payBySavedCard',
      'Pay with a saved card',
      "The order's customer pays with one of their saved cards: the order must name its customer (`customer.merchant_customer_id`) and the request carry that customer's `Customer-Token`. No 3D Secure is asked (the payment that saved the card was authenticated). The order's history names the card.",
      paySavedSchema,
      { card: 'card_4eC39HqLyjWDarjtT1zdp7dc', mode: 'sale' },
      {
        ...customerUnauthorized,
        404: jsonAnswer(
          `\`NOT_FOUND\`: no order has this id. ${cardNotFound}`,
          failure(['NOT_FOUND', 'CARD_NOT_FOUND']),
        ),
        422: jsonAnswer(
          '`VALIDATION_FAILED` (the request, or an order that names no customer: `errors.card`). `CARD_REVOKED`: the card was removed (here, or at the gateway); `CARD_EXPIRED`: past its expiry month. Both name `card`, and nothing was charged: `data` the order, as it was.',
          failure(
            ['VALIDATION_FAILED', 'CARD_REVOKED', 'CARD_EXPIRED'],
            publicPaymentAnswerSchema.nullable(),
          ),
        ),
      },
      CUSTOMER,
    ),
    payment(
      '/orders/{id}/pay/redirect',
      'payByRedirect',
      'Pay by redirect',
      'A hosted checkout session for a redirect method (`ideal`, `psc`, ...); `next_action` is its page, which returns to `/checkout/return` or `/checkout/cancel`.',
      payRedirectSchema,
      { payment_method: 'ideal', customer: { country_code: 'NL' } },
    ),
    {
      method: 'get',
      path: '/payment-methods',
      operationId: 'listPaymentMethods',
      summary: 'Redirect methods the gateway offers',
      description:
        "The gateway's advisory list; with `country` or `currency`, each says whether it is available.",
      tags: ['Payments'],
      requestParams: { query: methodsQuerySchema },
      responses: {
        200: jsonAnswer('The list.', success(paymentMethodsSchema)),
        422: invalidInput,
        ...rateLimited(
          'too many lists asked for from this client address (`payment_methods_per_address`): each asks the gateway',
        ),
        ...gatewayFailed,
        ...internal,
      },
    },
    operation(
      'capture',
      'Capture an authorized order',
      'Captures `amount` (major units; default the whole order) of an `authorized` order.',
      captureSchema,
      { amount: '12.34' },
      false,
    ),
    operation(
      'refund',
      'Refund a paid order',
      'Refunds `amount` (major units) of what was captured; the order becomes `partially_refunded` or `refunded`.',
      refundSchema,
      { amount: '2.00', reason: 'damaged' },
      true,
    ),
    operation(
      'void',
      'Void an authorized order',
      'Cancels the authorization: the order becomes `voided`.',
      voidSchema,
      { reason: 'out of stock' },
      false,
    ),
    {
      method: 'get',
      path: '/',
      operationId: 'homePage',
      summary: "The kit's home page",
      description: 'Where "Back to the shop" leads while `SHOP_URL` is not set: a page in words, not a 404.',
      tags: ['Browser'],
      responses: { 200: htmlAnswer('The page.') },
    },
    {
      method: 'get',
      path: '/checkout/3ds-return',
      operationId: 'threeDsReturnLanding',
      summary: 'Back from the 3DS challenge',
      description:
        "The challenge's `auth_url`: finishes the card payment held across the challenge (once; a reload shows the order as it stands) and shows where the payment stands.",
      tags: ['Browser'],
      requestParams: {
        query: z.object({
          card_verification_id: z.string().optional().meta({ description: 'The 3DS record (`tds_...`).' }),
          status: z.string().optional().meta({ description: 'Sent by the gateway; never trusted.' }),
          n: refreshes,
        }),
      },
      responses: landingAnswers,
    },
    sessionLanding('return', 'Back from the hosted checkout'),
    sessionLanding('cancel', 'Cancelled on the hosted checkout'),
    {
      method: 'post',
      path: '/webhooks/gateway',
      operationId: 'receiveGatewayWebhook',
      summary: "The gateway's webhook receiver",
      description:
        'Verifies `X-Service-Signature` on the raw body (at most 256 KiB) against every active secret before anything else, stores the event in the inbox (its id is the key: a repeat is a no-op), queues it and answers.',
      tags: ['Gateway'],
      requestParams: {
        header: z.object({
          'X-Service-Signature': z.string().meta({ description: '`t=<unix seconds>,v1=<hex HMAC-SHA256>`.' }),
          'X-Service-Replay': z.literal('true').optional().meta({ description: 'Sent on a replay.' }),
        }),
      },
      requestBody: json(eventPayloadSchema),
      responses: {
        200: jsonAnswer(
          '`Received.`, `Already received.` (nothing queued twice) or `pong` (a test ping).',
          z.object({ success: z.literal(true), message: z.string(), code: z.literal(''), data: z.null() }),
        ),
        400: jsonAnswer(
          '`MALFORMED_EVENT`: signed, but not an event; nothing stored.',
          failure(['MALFORMED_EVENT', 'BAD_REQUEST']),
        ),
        401: jsonAnswer(
          '`INVALID_SIGNATURE`: missing, wrong or stale; nothing stored.',
          failure(['INVALID_SIGNATURE']),
        ),
        413: jsonAnswer('`PAYLOAD_TOO_LARGE`: over 256 KiB.', failure(['PAYLOAD_TOO_LARGE'])),
        503: jsonAnswer(
          '`UNAVAILABLE`: the database could not store it; the gateway delivers it again.',
          failure(['UNAVAILABLE']),
          retryAfter,
        ),
        ...internal,
      },
    },
    {
      method: 'get',
      path: '/healthz',
      operationId: 'liveness',
      summary: 'Liveness',
      tags: ['Platform'],
      responses: { 200: jsonAnswer('The process answers.', success(z.object({ status: z.literal('ok') }))) },
    },
    {
      method: 'get',
      path: '/readyz',
      operationId: 'readiness',
      summary: 'Readiness: the database, Redis and the gateway',
      description: 'Each dependency is given 2 s.',
      tags: ['Platform'],
      responses: {
        200: jsonAnswer(
          'Ready.',
          z.object({
            success: z.literal(true),
            message: z.literal('ready'),
            code: z.literal(''),
            data: readiness,
          }),
        ),
        503: jsonAnswer(
          '`NOT_READY`: `data` names what is unavailable.',
          z.object({
            success: z.literal(false),
            message: z.literal('not ready'),
            code: z.literal('NOT_READY'),
            data: readiness,
          }),
        ),
      },
    },
    {
      method: 'get',
      path: '/reports/reconciliation',
      operationId: 'reconciliationReport',
      summary: 'The reconciliation report',
      description:
        'One row per order created in [`from`, `to`) beside what the gateway last said of its transaction, classified `matched`, `in_flight` or `mismatched` with the reason, and totals per currency in minor units; beside them, `unmatched_money`: gateway money no payment attempt holds, first seen in the range, with its own totals per currency. `format=csv`: the same rows as CSV, one header line; when the range has gateway money with no order, a blank line and a second table of it follow, with its own header line. `refresh=true` first asks the gateway about every row not matched, within the shared budget. Roles: finance, admin.',
      tags: ['Finance'],
      security: OPS,
      requestParams: { query: reportQuerySchema },
      responses: {
        200: {
          description: 'The report (JSON), or its rows as CSV with `format=csv`.',
          content: {
            'application/json': { schema: success(reportSchema) },
            'text/csv': { schema: { type: 'string' } },
          },
        },
        ...unauthorized,
        ...forbidden,
        422: invalidInput,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description:
        "This process's metrics in Prometheus text. Open unless `METRICS_TOKEN` is set; then `Authorization: Bearer <METRICS_TOKEN>`, or an operator's token (roles operator, finance, viewer, admin; another token is a 401).",
      tags: ['Platform'],
      responses: {
        200: { description: 'Prometheus text.', content: { 'text/plain': { schema: { type: 'string' } } } },
        401: jsonAnswer(
          "`UNAUTHORIZED`: METRICS_TOKEN is set, and neither it nor an operator's token was sent.",
          failure(['UNAUTHORIZED']),
        ),
      },
    },
    {
      method: 'get',
      path: '/ops/login',
      operationId: 'operatorLoginPage',
      summary: "The operator's sign-in form",
      description:
        "A form for an operator's token: the browser way into the queue board. With a live session cookie: who is signed in, a link to the board and a sign-out button.",
      tags: ['Operator'],
      responses: { 200: htmlAnswer('The form, or the signed-in page.') },
    },
    {
      method: 'post',
      path: '/ops/login',
      operationId: 'operatorLogin',
      summary: 'Sign in to the queue board',
      description:
        "With an operator's token (their own, or OPS_API_TOKEN), sets a cookie for `/ops` good for 30 minutes (HttpOnly, SameSite=Strict, and Secure whenever PUBLIC_BASE_URL is https) and sends the browser to the queue board at `/ops/queues`: with its actions for the roles operator and admin, read only for finance and viewer. A revoked operator's session ends with their next request. Wrong tokens are counted per client address (`LIMIT_LOGIN_FAILURES_PER_ADDRESS`, default 5 in 15 minutes): past them every attempt from that address, a right token included, is a 429 until the window ends.",
      tags: ['Operator'],
      requestBody: {
        content: { 'application/x-www-form-urlencoded': { schema: z.object({ token: z.string() }) } },
      },
      responses: {
        303: { description: 'Signed in: to `/ops/queues`, with the session cookie.' },
        401: htmlAnswer('Not a live operator token: the form again, saying so.'),
        403: htmlAnswer(
          'A live token of a role that cannot read the board (`storefront`): the form again, saying so; no session.',
        ),
        413: jsonAnswer('`VALIDATION_FAILED`: the form is over 4 KiB.', failure(['VALIDATION_FAILED'])),
        429: {
          ...htmlAnswer('Too many wrong tokens from this address: the form, saying when to try again.'),
          headers: retryAfter,
        },
      },
    },
    {
      method: 'post',
      path: '/ops/logout',
      operationId: 'operatorLogout',
      summary: 'Sign out of the queue board',
      description:
        'Ends the session of the cookie sent, for good: the cookie is cleared, and the session is recorded as ended until it would have expired, so that a copy of the cookie opens nothing either. Without a live session it only clears the cookie.',
      tags: ['Operator'],
      responses: { 303: { description: 'To `/ops/login`, with the cookie cleared.' } },
    },
    {
      method: 'get',
      path: '/unmatched-money',
      operationId: 'listUnmatchedMoney',
      summary: 'Gateway money with no order',
      description:
        'Every gateway transaction naming money that no payment attempt of the kit holds, newest first (by first sight): kept when an event, a replay, recovery or a poll told of it, and the order carrying its reference flagged for review. `resolution=open` for what still waits for an operator. Roles: operator, finance, viewer, admin (a `storefront` token is a 403).',
      tags: ['Operator'],
      security: OPS,
      requestParams: { query: unmatchedListQuerySchema },
      responses: {
        200: jsonAnswer('The list.', success(z.object({ unmatched_money: z.array(unmatchedMoneySchema) }))),
        ...unauthorized,
        ...forbidden,
        422: invalidInput,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'post',
      path: '/unmatched-money/{id}/attach',
      operationId: 'attachUnmatchedMoney',
      summary: 'Attach gateway money to an order',
      description: `The payment goes to the order through the one apply path, as the gateway's news of it: its current attempt takes it (or a new attempt does, when the order has none or its last one ended), and the order shows it; an amount that is not the order's is flagged for review. A capture, refund or void goes to the order whose payment it belongs to. Roles: finance, admin; the audit log gets a line.${BY}`,
      tags: ['Operator'],
      security: OPS,
      requestParams: { path: unmatchedPath },
      requestBody: json(attachSchema, { order_id: 'ord_1W3k9Qm2Zx8Yv4Ta7Lp0Rs5N' }),
      responses: {
        200: jsonAnswer(
          'Attached: the money and the order as it now stands.',
          success(z.object({ unmatched_money: unmatchedMoneySchema, order: orderSchema })),
        ),
        ...unauthorized,
        ...forbidden,
        ...unmatchedNotFound,
        409: jsonAnswer(
          '`INVALID_STATE`: the money is attached or resolved already (`data` its resolution and the allowed one), or the order cannot start a new attempt (`data` its status and those allowed). `ORDER_HAS_PAYMENT`: the order holds another payment (`errors.order_id`). `ORDER_CHANGED`: another payment reached the order meanwhile; nothing was done.',
          failure(
            ['INVALID_STATE', 'ORDER_HAS_PAYMENT', 'ORDER_CHANGED'],
            z.union([unmatchedStateSchema, invalidStateSchema, z.null()]),
          ),
        ),
        422: jsonAnswer(
          '`VALIDATION_FAILED`: `errors` names the field: `order_id` when no order has it, the order is in another currency, or it does not hold the payment a capture, refund or void belongs to.',
          failure(['VALIDATION_FAILED']),
        ),
        ...unreadable,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'post',
      path: '/unmatched-money/{id}/resolve',
      operationId: 'resolveUnmatchedMoney',
      summary: 'Resolve gateway money with a note',
      description: `What a person found (a test payment, money refunded at the gateway, another shop's payment), kept with the money: it leaves the open list and stays in the report. The note is required, at most 512 characters, with no card number. Roles: finance, admin; the audit log gets a line.${BY}`,
      tags: ['Operator'],
      security: OPS,
      requestParams: { path: unmatchedPath },
      requestBody: json(resolveSchema, { note: 'a test payment made at the gateway; refunded there' }),
      responses: {
        200: jsonAnswer('Resolved.', success(z.object({ unmatched_money: unmatchedMoneySchema }))),
        ...unauthorized,
        ...forbidden,
        ...unmatchedNotFound,
        409: jsonAnswer(
          '`INVALID_STATE`: the money is attached or resolved already (`data` its resolution and the allowed one).',
          failure(['INVALID_STATE'], unmatchedStateSchema),
        ),
        422: invalidInput,
        ...unreadable,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'post',
      path: '/customers/{id}/tokens',
      operationId: 'createCustomerToken',
      summary: "A customer's token, for their browser",
      description:
        "The shop's server vouches for the customer it signed in: the token lets that customer's browser save cards, list and remove them, and pay with them, for an hour. Roles: storefront, admin.",
      tags: ['Customers'],
      security: OPS,
      requestParams: { path: customerPath },
      responses: {
        201: jsonAnswer('The token.', success(customerTokenSchema)),
        ...unauthorized,
        ...noCustomer,
        ...forbidden,
        422: invalidInput,
        ...internal,
      },
    },
    {
      method: 'get',
      path: '/customers/{id}/cards',
      operationId: 'listSavedCards',
      summary: "A customer's saved cards",
      description:
        "The customer's active saved cards, newest first, as the gateway lists them now (`synced: true`); when the gateway cannot answer, as the kit last knew them (`synced: false`). Brand, last four and expiry: never a number. The customer's `Customer-Token`, or an operator's token (roles: operator, finance, viewer, admin; a `storefront` token is a 403).",
      tags: ['Customers'],
      security: CUSTOMER_OR_OPS,
      requestParams: { path: customerPath },
      responses: {
        200: jsonAnswer(
          'The cards.',
          success(
            z.object({ customer_id: z.string(), cards: z.array(savedCardSchema), synced: z.boolean() }),
          ),
        ),
        ...customerUnauthorized,
        ...forbidden,
        ...noCustomer,
        422: invalidInput,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'delete',
      path: '/customers/{id}/cards/{card}',
      operationId: 'removeSavedCard',
      summary: 'Remove a saved card',
      description:
        "Revoked at the gateway first, then here: no payment can use it after. Removing one already removed answers the same. The customer's `Customer-Token`, or an operator's token (roles: operator, admin; the audit log gets a line).",
      tags: ['Customers'],
      security: CUSTOMER_OR_OPS,
      requestParams: { path: savedCardPath },
      responses: {
        200: jsonAnswer('Removed.', success(z.object({ card: savedCardSchema }))),
        ...customerUnauthorized,
        ...forbidden,
        404: jsonAnswer(`${cardNotFound} ${emptyCustomer}`, failure(['CARD_NOT_FOUND', 'NOT_FOUND'])),
        422: invalidInput,
        ...gatewayFailed,
        ...internal,
      },
    },
    {
      method: 'post',
      path: '/customers/{id}/charges',
      operationId: 'chargeSavedCard',
      summary: 'Charge a saved card (merchant-initiated)',
      description:
        "A subscription's renewal or a top-up: a new order for the customer, paid at once with their saved card. `Idempotency-Key` is required and stored before the gateway hears of the charge: the same key again answers the same order (200), however often and after whatever crash, and never charges twice. Roles: operator, admin; the audit log gets a line per request.",
      tags: ['Customers'],
      security: OPS,
      requestParams: {
        path: customerPath,
        header: z.object({
          'Idempotency-Key': z.string().meta({ description: 'The charge: the same key is the same charge.' }),
        }),
      },
      requestBody: json(chargeSchema, {
        card: 'card_4eC39HqLyjWDarjtT1zdp7dc',
        amount: '9.99',
        currency: 'EUR',
        description: 'Plan renewal, December',
      }),
      responses: {
        201: jsonAnswer('Charged: a new order, `paid` (or `authorized`).', success(paymentAnswerSchema)),
        200: jsonAnswer('The same key again: the order as it stands.', success(paymentAnswerSchema)),
        202: jsonAnswer(
          'The outcome is not known yet: send the same request with the same key again, or read the order.',
          success(paymentAnswerSchema),
        ),
        402: jsonAnswer(
          "Declined, with the gateway's code; the same key again answers the same.",
          failure('gateway', paymentAnswerSchema),
        ),
        ...unauthorized,
        ...forbidden,
        404: jsonAnswer(`${cardNotFound} ${emptyCustomer}`, failure(['CARD_NOT_FOUND', 'NOT_FOUND'])),
        409: jsonAnswer(
          '`IDEMPOTENCY_KEY_REUSED`: the key was used for a charge of another amount, currency, saved card or mode (`data.order` that one). `PAYMENT_IN_PROGRESS`: the gateway holds the charge, still pending, or the same charge has been under way for 20 s (the same key again waits for it).',
          failure(['IDEMPOTENCY_KEY_REUSED', 'PAYMENT_IN_PROGRESS', 'TOO_MANY_ATTEMPTS'], z.unknown()),
        ),
        422: jsonAnswer(
          '`VALIDATION_FAILED` (`errors` names the field: `Idempotency-Key` when missing); `CARD_REVOKED`, `CARD_EXPIRED` (`errors.card`).',
          failure(['VALIDATION_FAILED', 'CARD_REVOKED', 'CARD_EXPIRED'], paymentAnswerSchema.nullable()),
        ),
        503: jsonAnswer(
          'The gateway is not available or busy: nothing was charged; send the same request again after `Retry-After`.',
          failure('gateway', paymentAnswerSchema),
          retryAfter,
        ),
        ...unreadable,
        ...internal,
      },
    },
    {
      method: 'get',
      path: '/disputes',
      operationId: 'listDisputes',
      summary: 'Disputes',
      description:
        "Every chargeback of an order's payment, newest first: opened by the gateway's `transaction.chargeback` with what it took, `won` when the gateway reverses it (the order is paid again), `lost` when an operator says so. `outcome=open` for those still undecided. Roles: operator, finance, viewer, admin (a `storefront` token is a 403).",
      tags: ['Operator'],
      security: OPS,
      requestParams: { query: disputeListQuerySchema },
      responses: {
        200: jsonAnswer('The list.', success(z.object({ disputes: z.array(disputeSchema) }))),
        ...unauthorized,
        ...forbidden,
        422: invalidInput,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'post',
      path: '/disputes/{id}/lost',
      operationId: 'loseDispute',
      summary: 'Record a dispute as lost',
      description: `The bank decided for the customer: the gateway says nothing more of it, so a person does. The order stays \`disputed\` (the money is gone) and its history says who and why. A reversal that comes later still makes it \`won\`. The note is required, at most 512 characters, with no card number. Roles: finance, admin; the audit log gets a line.${BY}`,
      tags: ['Operator'],
      security: OPS,
      requestParams: { path: disputePath },
      requestBody: json(loseDisputeSchema, { note: 'the issuer ruled for the cardholder' }),
      responses: {
        200: jsonAnswer('Lost.', success(z.object({ dispute: disputeSchema }))),
        ...unauthorized,
        ...forbidden,
        404: jsonAnswer('`NOT_FOUND`: no dispute has this id (`errors.id`).', failure(['NOT_FOUND'])),
        409: jsonAnswer(
          '`INVALID_STATE`: the dispute is won or lost already (`data` its outcome and the allowed one).',
          failure(['INVALID_STATE'], disputeStateSchema),
        ),
        422: invalidInput,
        ...unreadable,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'get',
      path: '/orders',
      operationId: 'listOrders',
      summary: 'Orders, and the review queue',
      description:
        'Orders newest first (by creation, then id), a page at a time: `next_cursor` is the `cursor` of the next page, and orders created meanwhile neither repeat nor skip a row. `needs_review=true` is the review queue: orders whose money does not add up, with `review_reason`. Filters combine: `status` (one or more, comma-separated), `currency`, `created_from` (inclusive) and `created_to` (exclusive). Roles: operator, finance, viewer, admin (a `storefront` token is a 403).',
      tags: ['Operator'],
      security: OPS,
      requestParams: { query: orderListQuerySchema },
      responses: {
        200: jsonAnswer('A page of orders.', success(orderListSchema)),
        ...unauthorized,
        ...forbidden,
        422: invalidInput,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'post',
      path: '/orders/{id}/review',
      operationId: 'resolveReview',
      summary: "Resolve a flagged order's review",
      description: `A person looked at an order flagged \`needs_review\` and says what they found: \`resolution\` (\`accepted\`: the money stands as the gateway has it; \`refunded\`: what did not belong was given back; \`corrected\`: put right another way; \`written_off\`: a loss the shop accepts; \`false_alarm\`: nothing was wrong) and a \`note\` (required, at most 512 characters, no card number). The flag and its reason are cleared; the order's history gets a line (\`resolved\`) with who, the resolution, the note and the reason cleared, and the audit log a line. The same finding seen again later (the next poll of the same payment) is recorded but does not flag the order again; a new one does. Roles: finance, admin.${BY}`,
      tags: ['Operator'],
      security: OPS,
      requestParams: { path: orderPath },
      requestBody: json(reviewSchema, {
        resolution: 'accepted',
        note: 'the customer agreed to the lower amount by phone',
      }),
      responses: {
        200: jsonAnswer('Resolved: the order as it now stands.', success(z.object({ order: orderSchema }))),
        ...unauthorized,
        ...forbidden,
        ...orderNotFound,
        409: jsonAnswer(
          '`NOT_FLAGGED`: the order is not flagged for review (never was, or someone resolved it first).',
          failure(['NOT_FLAGGED'], z.object({ needs_review: z.literal(false) })),
        ),
        422: invalidInput,
        ...unreadable,
        ...databaseDown,
        ...internal,
      },
    },
    {
      method: 'get',
      path: '/audit',
      operationId: 'auditExport',
      summary: 'The audit export: who did what',
      description:
        'Every act a person (or the kit on their settings) did in [`from`, `to`), oldest first: capture, refund and void (with what became of them at the gateway), reviews resolved, gateway money attached or resolved, disputes lost, operators added and revoked; who (name, role, credential), on what order and subject, the amount, the reason or note, and the request. CSV by default (one header line, a line per act, streamed); `format=json` for the same lines as JSON. Roles: finance, admin.',
      tags: ['Finance'],
      security: OPS,
      requestParams: { query: auditQuerySchema },
      responses: {
        200: {
          description: 'The lines as CSV (the default), or as JSON with `format=json`.',
          content: {
            'text/csv': { schema: { type: 'string' } },
            'application/json': { schema: success(auditSchema) },
          },
        },
        ...unauthorized,
        ...forbidden,
        422: invalidInput,
        ...databaseDown,
        ...internal,
      },
    },
    ...documentationRoutes('Documentation'),
  ]),
};
