/** Orders: created and read by the storefront; listed, and their reviews resolved, by operators. */
import { z } from 'zod';
import { type ApiRoute, jsonAnswer } from '../../../shared/api-document.js';
import {
  createdOrderSchema,
  failure,
  namedOrderSchema,
  orderListSchema,
  orderSchema,
  orderWithHistorySchema,
  publicOrderSchema,
  replayedOrderSchema,
  success,
} from '../response-schemas.js';
import { cancelSchema, createOrderSchema, orderListQuerySchema, reviewSchema } from '../schemas.js';
import {
  BY,
  databaseDown,
  forbidden,
  internal,
  invalidInput,
  json,
  OPS,
  orderNotFound,
  orderPath,
  orderSecretHeader,
  rateLimited,
  retryAfter,
  SHOPPER,
  shopperOrderNotFound,
  unauthorized,
  unreadable,
  WRONG_TOKENS,
} from './common.js';

/** POST /orders and GET /orders/{id}. */
export const orderRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/orders',
    operationId: 'createOrder',
    summary: 'Create an order',
    description:
      "An order in a currency the shop takes (`ORDER_CURRENCIES`) and at most `ORDER_MAX_AMOUNT`, made by anyone. Its `reference` is unique; without one the kit makes one (the order's id). A `reference` of the caller's own needs the storefront's or an operator's token (`Authorization: Bearer`): otherwise a stranger could take the shop's next reference first. The answer carries the order's `client_secret`, which no read shows again: the order's pay routes and its public view need it beside the id (`Order-Secret`), so that an order id seen in a URL or a log lets nobody pay it, spend its attempts or read it. With an `Idempotency-Key` the order is made once: the same key and body within 24 hours answer the order it made (200, `Idempotency-Replayed: true`) with its client secret, however many requests with it arrive at once; the same key with another body is a 409 `IDEMPOTENCY_KEY_REUSED`. A key belongs to the token that sent it (each operator's own, OPS_API_TOKEN's); without a token, every caller shares the keys, so a key must then be a secret (at least 16 characters: a UUID).",
    tags: ['Orders'],
    security: [{}, { opsToken: [] }],
    requestParams: {
      header: z.object({
        'Idempotency-Key': z.string().min(1).max(255).optional().meta({
          description:
            'Makes the order once: a retry with the same key and body, within 24 hours, answers the order the first made, with its client secret. Any text up to 255 characters, kept only as a digest; without a token, at least 16 characters (a UUID).',
        }),
      }),
    },
    requestBody: json(createOrderSchema, {
      amount: '12.34',
      currency: 'EUR',
      reference: 'shop-order-1001',
      customer: { email: 'ada@example.com', country_code: 'GB' },
    }),
    responses: {
      201: jsonAnswer(
        "Created: `pending`. The order carries its `client_secret`, this once: the order's shopper routes need it.",
        success(z.object({ order: createdOrderSchema })),
      ),
      200: jsonAnswer(
        'A replay: an earlier request with this `Idempotency-Key` and the same body made the order. The order as it now stands, and its `client_secret`; nothing new was made.',
        success(z.object({ order: replayedOrderSchema })),
        z.object({
          'Idempotency-Replayed': z.literal('true').meta({ description: 'The answer is a replay.' }),
        }),
      ),
      401: jsonAnswer(
        '`UNAUTHORIZED`: a `reference` was given without a token; or a `reference` or an `Idempotency-Key` came with a token nobody holds (a token that is sent must be good: it says whose key it is).',
        failure(['UNAUTHORIZED']),
      ),
      ...forbidden,
      409: jsonAnswer(
        '`DUPLICATE_REFERENCE`: another order has this reference (`errors.reference`; `data.order_id` names it, and `GET /orders?reference=` finds it). `IDEMPOTENCY_KEY_REUSED`: this `Idempotency-Key` made another order (another amount, currency, reference, description or customer) within 24 hours; `data.order_id` names it to the token whose key it is (null without a token). Nothing was made.',
        failure(['DUPLICATE_REFERENCE', 'IDEMPOTENCY_KEY_REUSED'], namedOrderSchema.nullable()),
      ),
      422: invalidInput,
      ...rateLimited(`too many orders from this client address (\`orders_per_address\`), or ${WRONG_TOKENS}`),
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
      "Without `Authorization`, whoever holds the order's client secret (`Order-Secret`: the storefront that made it, the shopper's browser it handed it to) reads its public view (`PublicOrder`): status, amounts, and `next_action` while it waits on the shopper. The id alone reads nothing: without the secret, or with a wrong one, the answer is the 404 of an order that does not exist. With `Authorization: Bearer <token>` of a role that may read (viewer, finance, operator, admin), no secret is needed: the whole order (`OrderWithHistory`): the customer, the description, the payment, the review, every observation of it and its disputes. A token that is sent must be good: a wrong one is a 401, never the public view; a `storefront` role's is a 403 (the storefront reads with the secret, as the shopper does). Every answer carries `Vary: Authorization, Order-Secret` and `Cache-Control: no-store`.",
    tags: ['Orders'],
    security: SHOPPER,
    requestParams: { path: orderPath, header: orderSecretHeader },
    responses: {
      200: jsonAnswer(
        "With the order's secret, `PublicOrder`; with a reader's token, `OrderWithHistory`.",
        success(z.object({ order: z.union([publicOrderSchema, orderWithHistorySchema]) })),
        z.object({
          Vary: z.string().meta({
            description: '`Authorization, Order-Secret`: the answer depends on the token and the secret.',
          }),
          'Cache-Control': z.string().meta({ description: '`no-store`.' }),
        }),
      ),
      ...unauthorized,
      ...forbidden,
      ...shopperOrderNotFound,
      ...databaseDown,
      ...internal,
    },
  },
];

/** An order ended by the shop (issue 43, part 2): POST /orders/{id}/cancel. */
export const cancelRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/orders/{id}/cancel',
    operationId: 'cancelOrder',
    summary: 'Cancel an unpaid order: it ends, and takes no more payments',
    description: `Ends an order nobody paid: it becomes \`closed\` with \`closed_reason: cancelled\`, takes no payment attempt again (a pay route answers 409 \`ORDER_CLOSED\`), is no longer polled, and the shop is sent \`order.closed\`. A 3DS challenge still open pays nothing afterwards. A payment at the gateway that may be under way (a session, a pending transaction) is asked about first: money wins, and a paid order is a 409 \`ORDER_PAID\`, to be refunded instead. An \`authorized\` order is voided first, as \`POST /orders/{id}/void\` without a key would (its history and audit lines too; the same request again finds the same void), then closed. A hosted checkout page the shopper is still on cannot be called off at the gateway: if it is paid in its last minutes, the money is applied and the order flagged for review (\`needs_review\`), never lost. Idempotent: a closed order answers 200 as it is, its first reason kept. The order's history gets a line naming who and why, and the audit log a line (\`order.cancel\`). Roles: storefront, operator, admin (the order's client secret alone may not).${BY}`,
    tags: ['Orders'],
    security: OPS,
    requestParams: { path: orderPath },
    requestBody: json(cancelSchema, { reason: 'the customer changed their mind' }),
    responses: {
      200: jsonAnswer(
        'Closed (`closed_reason` says why; a closed order answers as it is).',
        success(z.object({ order: orderSchema })),
      ),
      ...unauthorized,
      ...forbidden,
      ...orderNotFound,
      409: jsonAnswer(
        "`ORDER_PAID`: the order holds money (paid, refunded in part, disputed): nothing was done; refund it (`data.refund` names the route). `PAYMENT_IN_PROGRESS`: a payment of the order was under way for the whole wait (20 s): nothing was done; try again after `Retry-After`. `VOID_REFUSED`: the gateway refused to void the order's authorisation (`data.gateway_code`): the order stays `authorized`.",
        failure(
          ['ORDER_PAID', 'PAYMENT_IN_PROGRESS', 'VOID_REFUSED'],
          z.object({
            order: orderSchema,
            refund: z
              .object({ method: z.literal('POST'), path: z.string() })
              .optional()
              .meta({ description: 'With `ORDER_PAID`: the route that gives the money back.' }),
            gateway_code: z
              .string()
              .optional()
              .meta({ description: "With `VOID_REFUSED`: the gateway's code." }),
          }),
        ),
        retryAfter.partial(),
      ),
      422: invalidInput,
      503: jsonAnswer(
        "`GATEWAY_UNAVAILABLE`: the gateway could not say whether the payment under way was paid; `OUTCOME_UNKNOWN`: the void of the authorisation had no answer; `UNAVAILABLE`: the database cannot be reached. Nothing was closed: send the same cancel again (the void's key is stored).",
        failure(
          ['GATEWAY_UNAVAILABLE', 'OUTCOME_UNKNOWN', 'UNAVAILABLE'],
          z.object({ order: orderSchema }).nullable(),
        ),
        retryAfter,
      ),
      ...unreadable,
      ...internal,
    },
  },
];

/** The order list and its review queue: GET /orders, POST /orders/{id}/review. */
export const reviewQueueRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/orders',
    operationId: 'listOrders',
    summary: 'Orders, and the review queue',
    description:
      "Orders newest first (by creation, then id), a page at a time: `next_cursor` is the `cursor` of the next page, and orders created meanwhile neither repeat nor skip a row. `needs_review=true` is the review queue: orders whose money does not add up, with `review_reason`. Filters combine: `status` (one or more, comma-separated), `currency`, `reference` (the one order that carries it: what a 409 `DUPLICATE_REFERENCE` is about), `created_from` (inclusive) and `created_to` (exclusive), and, in platform mode, `merchant_id` (one merchant's orders; those of the first merchant include the orders made before platform mode). A token scoped to some merchants sees theirs alone (another merchant named is a 403). Roles: operator, finance, viewer, admin (a `storefront` token is a 403).",
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
];
