/** Paying for an order: by card, with a saved card, by redirect; and the redirect methods offered. */
import { z } from 'zod';
import { type ApiRoute, jsonAnswer } from '../../../shared/api-document.js';
import {
  failure,
  orderClosedStateSchema,
  paymentInvalidStateSchema,
  paymentMethodsSchema,
  publicPaymentAnswerSchema,
  success,
} from '../response-schemas.js';
import { methodsQuerySchema, payCardSchema, payRedirectSchema, paySavedSchema } from '../schemas.js';
import {
  cardNotFound,
  customerUnauthorized,
  forbidden,
  gatewayFailed,
  internal,
  invalidInput,
  json,
  MERCHANT_KEY_TEXT,
  merchantKeySchema,
  orderPath,
  orderSecretHeader,
  rateLimited,
  retryAfter,
  SHOPPER,
  SHOPPER_NOT_FOUND,
  shopperOrderNotFound,
  unauthorized,
  unreadable,
  WRONG_TOKENS,
} from './common.js';

const TEST_CARD = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvv: '123' };

/** The customer's own token, beside the order's secret (no scheme: a header or the body) or a token. */
const CUSTOMER: Record<string, string[]>[] = [{ customerToken: [] }, { customerToken: [], opsToken: [] }];

/** The customer's token only with `save_card`; the order's secret (or a token) always. */
const CUSTOMER_TO_SAVE: Record<string, string[]>[] = [...SHOPPER, ...CUSTOMER];

const tooManyAttemptsSchema = z
  .object({
    failed_attempts: z.number().int().meta({ description: "The order's failed attempts that count." }),
    limit: z.number().int().meta({ description: 'MAX_FAILED_ATTEMPTS_PER_ORDER.' }),
  })
  .meta({ id: 'TooManyAttempts', description: 'The order takes no more payment attempts.' });

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
    // Whoever holds an order's client secret may pay it: the answers show what the secret reads.
    description: `${description} The order's client secret (\`POST /orders\` answered it) goes with the id, in the \`Order-Secret\` header or as \`client_secret\` in the body; an operator's or the storefront's token (\`Authorization: Bearer\`) needs none. Without either, the answer is a 404, and nothing of the order's (its limit, its failed attempts) is spent. The answers show the order's public view (\`PublicOrder\`), as \`GET /orders/{id}\` with the secret does.`,
    tags: ['Payments'],
    requestParams: { path: orderPath, header: orderSecretHeader },
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
      ...shopperOrderNotFound,
      401: jsonAnswer(
        '`UNAUTHORIZED`: an `Authorization` token nobody holds (unknown, or revoked): a token that is sent must be good, never a try without it.',
        failure(['UNAUTHORIZED']),
      ),
      ...payConflict(),
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
    security: security ?? SHOPPER,
  } satisfies ApiRoute;
}

/** A payment's 409s; the saved-card route adds its daily bound (`also`). */
function payConflict(also?: { text: string; codes: string[]; data: z.ZodType }) {
  return {
    409: jsonAnswer(
      `\`INVALID_STATE\`: the order is past paying for (paid, refunded, ...; \`data\` the status, those allowed and the order as it stands: a second press of Pay finds the first one's payment). \`PAYMENT_IN_PROGRESS\`: the gateway holds a payment for this order that is still pending, or whose status it could not tell now (a payment whose answer was lost, met again as the gateway's \`ERR_DUPLICATE\`), or another payment of this order has been under way for 20 s (a second press of Pay waits for the first; nothing was started); \`data\` the order, still \`pending\` or \`requires_action\`, never \`failed\`. Try again after \`Retry-After\` seconds, or show the order: the webhook and the poller settle it. \`TOO_MANY_ATTEMPTS\`: the order has had \`MAX_FAILED_ATTEMPTS_PER_ORDER\` failed payment attempts (declines; a gateway that was down or busy does not count) and takes no more: a new order is needed; \`data\` the count and the cap. \`ORDER_CLOSED\`: the order ended (\`closed\`: cancelled, or expired by \`ORDER_TTL\`) and takes no payment again: a new order is needed; \`data\` the reason and the order. A card payment: ${MERCHANT_KEY_TEXT}${also ? ` ${also.text}` : ''}`,
      failure(
        [
          'INVALID_STATE',
          'PAYMENT_IN_PROGRESS',
          'TOO_MANY_ATTEMPTS',
          'ORDER_CLOSED',
          'MERCHANT_KEY_MISSING',
          'MERCHANT_KEY_REFUSED',
          ...(also?.codes ?? []),
        ],
        z.union([
          orderClosedStateSchema,
          paymentInvalidStateSchema,
          publicPaymentAnswerSchema,
          tooManyAttemptsSchema,
          merchantKeySchema,
          ...(also ? [also.data] : []),
        ]),
      ),
      z.object({
        'Retry-After': z
          .string()
          .optional()
          .meta({ description: 'With `PAYMENT_IN_PROGRESS`: seconds to wait before asking again.' }),
      }),
    ),
  };
}

/** What a customer's saved cards paid in 24 hours, against the most they may (409 `SAVED_CARD_LIMIT`). */
const savedCardLimitSchema = z
  .object({
    payments: z
      .number()
      .int()
      .meta({ description: 'Payments made with the shopper there in the 24 hours before.' }),
    amount: z.number().int().meta({ description: 'What they paid in this currency, in minor units.' }),
    currency: z.string(),
    most_payments: z.number().int().meta({ description: '`SAVED_CARD_DAILY_PAYMENTS`.' }),
    most_amount: z
      .number()
      .int()
      .meta({ description: '`SAVED_CARD_DAILY_AMOUNT`, in minor units of this currency.' }),
  })
  .meta({ id: 'SavedCardLimit' });

/** The three ways to pay, then GET /payment-methods. */
export const paymentRoutes: ApiRoute[] = [
  payment(
    '/orders/{id}/pay/card',
    'payByCard',
    'Pay by card',
    '3D Secure first, then the transaction (`mode` `sale` captures at once, `auth` waits for a capture). A challenge answers 200 with `next_action`: the challenge page, which returns to `/checkout/3ds-return`. Card data is passed to the gateway and kept nowhere.',
    payCardSchema,
    { card: TEST_CARD, mode: 'auth' },
    {
      401: jsonAnswer(
        "`UNAUTHORIZED`: an `Authorization` token nobody holds. With `save_card: true` only: `CUSTOMER_TOKEN_REQUIRED` or `CUSTOMER_TOKEN_INVALID`, the order's customer's `Customer-Token` is missing or not theirs. Nothing was charged.",
        failure(['UNAUTHORIZED', 'CUSTOMER_TOKEN_REQUIRED', 'CUSTOMER_TOKEN_INVALID']),
      ),
    },
    CUSTOMER_TO_SAVE,
  ),
  payment(
    '/orders/{id}/pay/saved',
    'payBySavedCard',
    'Pay with a saved card',
    "The order's customer pays with one of their saved cards: the order must name its customer (`customer.merchant_customer_id`) and the request carry a `Customer-Token` the shop's server minted for this order (`POST /customers/{id}/tokens` with `order_id`). No 3D Secure is asked (the payment that saved the card was authenticated). A customer's saved cards pay at most `SAVED_CARD_DAILY_PAYMENTS` times and `SAVED_CARD_DAILY_AMOUNT` per currency in 24 hours this way, every try counted; past that an operator charges (`POST /customers/{id}/charges`). Each payment leaves an audit line naming the credential that vouched. The order's history names the card.",
    paySavedSchema,
    { card: 'card_4eC39HqLyjWDarjtT1zdp7dc', mode: 'sale' },
    {
      ...customerUnauthorized,
      403: jsonAnswer(
        "`CUSTOMER_TOKEN_NOT_FOR_ORDER`: the `Customer-Token` is this customer's, but was minted without an order (it lists and removes cards, and pays nothing) or for another order. Nothing was charged.",
        failure(['CUSTOMER_TOKEN_NOT_FOR_ORDER']),
      ),
      ...payConflict({
        text: "`SAVED_CARD_LIMIT`: the customer's saved cards have paid `SAVED_CARD_DAILY_PAYMENTS` times, or this would take them past `SAVED_CARD_DAILY_AMOUNT` in this currency, in the last 24 hours: nothing was charged, and an operator must charge it (`POST /customers/{id}/charges`); `data` what was paid and the bounds.",
        codes: ['SAVED_CARD_LIMIT'],
        data: savedCardLimitSchema,
      }),
      404: jsonAnswer(`${SHOPPER_NOT_FOUND} ${cardNotFound}`, failure(['NOT_FOUND', 'CARD_NOT_FOUND'])),
      422: jsonAnswer(
        '`VALIDATION_FAILED` (the request, or an order that names no customer: `errors.card`). `CARD_REVOKED`: the card was removed (here, or at the gateway); `CARD_EXPIRED`: past its expiry month. Both name `card`, and nothing was charged: `data` the order, as it was.',
        failure(['VALIDATION_FAILED', 'CARD_REVOKED', 'CARD_EXPIRED'], publicPaymentAnswerSchema.nullable()),
      ),
    },
    CUSTOMER,
  ),
  payment(
    '/orders/{id}/pay/redirect',
    'payByRedirect',
    'Pay by redirect',
    "A hosted checkout session for a redirect method (`ideal`, `psc`, ...); `next_action` is its page, which returns to `/checkout/return` or `/checkout/cancel`. The gateway is told the client's address (the connection's, or behind `TRUST_PROXY` the one the trusted proxies saw) as the device's `customer.ip_address`; a `customer.ip_address` in the body is used only from the shop's server, whose token (`Authorization: Bearer`, a role that may name orders: storefront, operator, admin) says it calls for a shopper. Without a token anyone may pay; a token that is sent must be good.",
    payRedirectSchema,
    { payment_method: 'ideal', customer: { country_code: 'NL' } },
    {
      401: jsonAnswer(
        '`UNAUTHORIZED`: a bearer token was sent that nobody holds (send none to pay as anyone). Nothing was started.',
        failure(['UNAUTHORIZED']),
      ),
      ...rateLimited(
        `too many payment requests from this client address (\`pay_per_address\`) or for this order (\`pay_per_order\`), or ${WRONG_TOKENS}`,
      ),
    },
    [{}, { opsToken: [] }],
  ),
  {
    method: 'get',
    path: '/payment-methods',
    operationId: 'listPaymentMethods',
    summary: 'Redirect methods the gateway offers',
    description:
      "The gateway's advisory list; with `country` or `currency`, each says whether it is available. In platform mode, a merchant's: `merchant_id` (required when the kit acts for several, unless a token scoped to one is sent). Anyone may ask; a token that is sent must be good, and its scope must hold the merchant.",
    tags: ['Payments'],
    security: [],
    requestParams: { query: methodsQuerySchema },
    responses: {
      200: jsonAnswer('The list.', success(paymentMethodsSchema)),
      ...unauthorized,
      ...forbidden,
      422: invalidInput,
      ...rateLimited(
        'too many lists asked for from this client address (`payment_methods_per_address`): each asks the gateway',
      ),
      ...gatewayFailed,
      ...internal,
    },
  },
];
