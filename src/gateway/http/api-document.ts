import { z } from 'zod';
import {
  type ApiRegistry,
  type ApiRoute,
  documentationOutside,
  documentationRoutes,
  htmlAnswer,
  jsonAnswer,
} from '../../shared/api-document.js';
import { ACTIONS } from '../hosted/checkout-page.js';
import { listQuery as instrumentListQuery } from '../routes/payment-instruments.js';
import { query as paymentMethodsQuery } from '../routes/payment-methods.js';
import { createSchema as createSessionSchema } from '../routes/payment-sessions.js';
import { advanceSchema, chargebackSchema, outageSchema, settleSchema } from '../routes/sandbox-controls.js';
import { verifySchema } from '../routes/three-ds.js';
import { initiateSchema, operationSchemas } from '../routes/transactions.js';
import { listQuery, merchantOnlyBody, putSchema } from '../routes/webhooks.js';
import {
  apiKeySchema,
  duplicateSchema,
  endpointSchema,
  endpointWithSecretSchema,
  eventDetailSchema,
  eventListSchema,
  eventRowSchema,
  failure,
  instrumentListSchema,
  instrumentSchema,
  paymentMethodsSchema,
  pingSchema,
  sessionAnswerSchema,
  success,
  tickReportSchema,
  transactionSchema,
  verificationSchema,
} from './response-schemas.js';

/**
 * The sandbox gateway's OpenAPI document (gateway-api.md, with sandbox.md's decisions), served at its
 * /openapi.json and /docs. Every route of createGateway has one entry in `routes` below, and a test
 * fails for a route served without one (or an entry no route serves). Request schemas are the routes'
 * own; responses are response-schemas.ts.
 */

/** A JSON body; `example` is what Swagger UI shows and fills in (a test checks it against the schema). */
const json = (schema: z.ZodType, example?: unknown) => ({
  content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
});
const TEST_CARD = { number: '4242424242424242', exp_month: '12', exp_year: 2030, cvv: '123' };
const form = (schema: z.ZodType) => ({ content: { 'application/x-www-form-urlencoded': { schema } } });
const KEY = [{ apiKey: [] }];

/** sandbox.md section 9: every answer, errors included, says what is left of the key's minute. */
const rateHeader = {
  'X-RateLimit-Remaining': z.string().meta({ description: "Requests left in the key's 60-second window." }),
};
const retryAfter = { 'Retry-After': z.string().meta({ description: 'Seconds to wait.' }) };
const answer = (description: string, schema: z.ZodType, headers: Record<string, z.ZodType> = {}) =>
  jsonAnswer(description, schema, z.object({ ...rateHeader, ...headers }));
const page = (description: string) => ({ ...htmlAnswer(description), headers: z.object(rateHeader) });
const note = { schema: { type: 'string' as const } };
const redirect = (description: string) => ({
  description,
  headers: z.object({
    ...rateHeader,
    Location: z.url().meta({ description: 'Where the browser goes next.' }),
  }),
  // Koa's redirect writes a one-line "Redirecting to ..." in the type the browser accepts.
  content: { 'text/plain': note, 'text/html': note },
});

const authFailed = {
  401: answer('`ERR_AUTH_FAILED`: no API key, or an unknown one.', failure(['ERR_AUTH_FAILED'])),
  403: answer(
    '`ERR_AUTH_FAILED`: the key or its account is inactive, or the key may not call this (a partner key where a merchant key is needed, a missing scope).',
    failure(['ERR_AUTH_FAILED']),
  ),
};
const limited = {
  429: answer(
    "`ERR_RATE_LIMITED`: over the key's 1000 requests a minute (responses slow down from 500).",
    failure(['ERR_RATE_LIMITED']),
    retryAfter,
  ),
};
const unexpected = {
  500: answer('`ERR_UNEXPECTED`: safe to retry with backoff.', failure(['ERR_UNEXPECTED'])),
};
/** What every call of /api/v1 may answer. */
const apiAnswers = { ...authFailed, ...limited, ...unexpected };
const bodyTooLarge = {
  413: answer('`ERR_VALIDATION_FAILED`: the body is over 1 MiB.', failure(['ERR_VALIDATION_FAILED'])),
};
const invalid = answer(
  '`ERR_VALIDATION_FAILED`: `errors` names each field (malformed JSON: `errors.body`).',
  failure(['ERR_VALIDATION_FAILED']),
);
const notFound = (what: string) => ({
  404: answer(`\`ERR_NOT_FOUND\`: no ${what}, or one this key may not see.`, failure(['ERR_NOT_FOUND'])),
});
const partnerMerchant = '`ERR_AUTH_FAILED`: a partner key without a linked `merchant_id`.';

const transactionPath = z.object({ id: z.string().meta({ description: 'The transaction id.' }) });
const sessionPath = z.object({ sessionId: z.string().meta({ description: '`ps_...`' }) });
const eventPath = z.object({ eventId: z.string().meta({ description: '`evt_...`' }) });
const instrumentPath = z.object({ vaultToken: z.string().meta({ description: '`vt_...`' }) });
const merchantQuery = z.object({
  merchant_id: z
    .string()
    .regex(/^\d{1,15}$/)
    .optional()
    .meta({ description: 'Partner keys: the linked merchant.' }),
});

/** Capture, refund and void: merchant keys only, with the Idempotency contract. */
function operation(
  name: keyof typeof operationSchemas,
  summary: string,
  description: string,
  example: unknown,
  declines: { codes: string[]; text: string } = { codes: [], text: '' },
): ApiRoute {
  return {
    method: 'post',
    path: `/api/v1/transactions/{id}/${name}`,
    operationId: `${name}Transaction`,
    summary,
    description: `${description} gateway-api.md, Idempotency contract: the same \`Idempotency-Key\` and body within 24 hours returns the stored answer (declines too) with \`Idempotency-Replayed: true\`.`,
    tags: ['Transactions'],
    security: KEY,
    requestParams: {
      path: transactionPath,
      header: z.object({
        'Idempotency-Key': z
          .string()
          .min(1)
          .max(255)
          .optional()
          .meta({ description: 'Scoped to the API key, kept 24 hours.' }),
      }),
    },
    requestBody: json(operationSchemas[name], example),
    responses: {
      200: answer('Done: the new record.', success(z.object({ transaction: transactionSchema })), {
        'Idempotency-Replayed': z.literal('true').optional().meta({ description: 'On a stored answer.' }),
      }),
      400: answer(
        `\`ERR_INVALID_TRANSACTION\` (not in a state for this), \`ERR_ADAPTER_INVALID_AMOUNT\` (more than is left)${declines.text}.`,
        failure(['ERR_INVALID_TRANSACTION', 'ERR_ADAPTER_INVALID_AMOUNT', ...declines.codes]),
      ),
      ...notFound('transaction'),
      409: answer(
        '`ERR_IDEMPOTENCY_CONFLICT` (the key was used with another body), `ERR_IDEMPOTENT_REQUEST_IN_PROGRESS` (its first request still runs).',
        failure(['ERR_IDEMPOTENCY_CONFLICT', 'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS']),
      ),
      422: answer(
        '`ERR_VALIDATION_FAILED`: the body, the amount for the currency, or an empty or over-long `Idempotency-Key`; the key is not used up.',
        failure(['ERR_VALIDATION_FAILED']),
      ),
      ...bodyTooLarge,
      ...apiAnswers,
    },
  };
}

/** The hosted pages answer a person's browser; their errors are still the envelope. */
function hostedPage(
  path: string,
  operationId: string,
  summary: string,
  description: string,
  params: z.ZodObject,
  what: string,
): ApiRoute {
  return {
    method: 'get',
    path,
    operationId,
    summary,
    description,
    tags: ['Hosted pages'],
    security: [],
    requestParams: { path: params },
    responses: {
      200: page('The page.'),
      ...notFound(what),
      429: answer(
        '`ERR_RATE_LIMITED`: over 60 page requests a minute from this address.',
        failure(['ERR_RATE_LIMITED']),
        retryAfter,
      ),
      ...unexpected,
    },
  };
}

function hostedButton(
  path: string,
  operationId: string,
  summary: string,
  description: string,
  params: z.ZodObject,
  actions: z.ZodEnum,
  what: string,
): ApiRoute {
  return {
    method: 'post',
    path,
    operationId,
    summary,
    description,
    tags: ['Hosted pages'],
    security: [],
    requestParams: { path: params },
    requestBody: form(z.object({ action: actions })),
    responses: {
      303: redirect(
        'Back to the merchant, with the outcome in the query. A second press returns what was decided.',
      ),
      ...notFound(what),
      422: answer('`ERR_VALIDATION_FAILED`: an unknown `action`.', failure(['ERR_VALIDATION_FAILED'])),
      429: answer(
        '`ERR_RATE_LIMITED`: over 60 page requests a minute from this address.',
        failure(['ERR_RATE_LIMITED']),
        retryAfter,
      ),
      ...unexpected,
    },
  };
}

/** sandbox.md section 10: outside /api/v1, behind a key, counted against nothing. Marked `x-sandbox-only`. */
function control(
  route: Omit<ApiRoute, 'method' | 'tags' | 'security'> & {
    path: `/sandbox/${string}`;
    method?: 'get' | 'post';
  },
): ApiRoute {
  return {
    method: 'post',
    tags: ['Sandbox controls'],
    security: KEY,
    'x-sandbox-only': true,
    ...route,
    responses: { ...route.responses, ...authFailed, ...unexpected },
  };
}

const CARD_DECLINES = [
  'ERR_CARD_DO_NOT_HONOR',
  'ERR_CARD_INSUFFICIENT_FUNDS',
  'ERR_EXPIRED_CARD',
  'ERR_CARD_SECURITY_VIOLATION',
  'ERR_CARD_SYSTEM_ERROR',
  'ERR_CARD_ISSUER_UNAVAILABLE',
  'ERR_CARD_FRAUD_SUSPECTED',
  'ERR_CARD_LOST_OR_STOLEN',
  'ERR_INVALID_ACCOUNT_NUMBER',
];

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
  outside: [documentationOutside],
  routes: [
    {
      method: 'post',
      path: '/api/v1/3ds/verify',
      operationId: 'verifyCard',
      summary: 'Verify a card with 3D Secure',
      description:
        'Frictionless: `status` `full_auth`, use `public_id` at once. Challenge: send the cardholder to `challenge_url`; they come back to `auth_url` with `card_verification_id` and `status`. Merchant keys only.',
      tags: ['Card verification'],
      security: KEY,
      requestBody: json(verifySchema, {
        amount: 12.34,
        currency: 'EUR',
        card: TEST_CARD,
        auth_url: 'https://shop.example/checkout/3ds-return',
      }),
      responses: {
        200: answer(
          'The verification; the message tells frictionless from challenge.',
          success(verificationSchema),
        ),
        400: answer(
          '`ERR_3DS_TECHNICAL_ERROR`, `ERR_3DS_NOT_ENROLLED`, `ERR_3DS_NOT_SUPPORTED` (`data` the record), or the card or amount refused (`data` null).',
          failure(
            [
              'ERR_3DS_TECHNICAL_ERROR',
              'ERR_3DS_NOT_ENROLLED',
              'ERR_3DS_NOT_SUPPORTED',
              'ERR_PAYMENT_METHOD_NOT_ENABLED',
              'ERR_ADAPTER_INVALID_AMOUNT',
              'ERR_INVALID_ACCOUNT_NUMBER',
              'ERR_EXPIRED_CARD',
            ],
            verificationSchema.nullable(),
          ),
        ),
        422: invalid,
        ...bodyTooLarge,
        ...apiAnswers,
      },
    },
    {
      method: 'post',
      path: '/api/v1/transactions',
      operationId: 'createTransaction',
      summary: 'Pay: a sale or an auth',
      description:
        'A sale is captured at once, an auth waits for a capture. Cards that need 3D Secure send `card_verification_data.id`. Partner keys name a linked `merchant_id`. With `save_payment_instrument` (and `customer.merchant_customer_id`) an approved payment keeps its card and carries `vault_token`; the same card for the same customer keeps its token. Paying with `vault_token` instead of `card` asks no 3D Secure (`card_verification_data` is ignored) and is answered as the saved card is.',
      tags: ['Transactions'],
      security: KEY,
      requestBody: json(initiateSchema, {
        amount: 12.34,
        currency: 'EUR',
        transaction_type: 'auth',
        reference: 'order-1001',
        card: TEST_CARD,
        card_verification_data: { id: 'tds_4fP2kQ9sVx1Lm7Zc3Ba8Ny0R' },
      }),
      responses: {
        200: answer('Approved: the transaction (`captured` or `auth`).', success(transactionSchema)),
        400: answer(
          "Declined or refused, no funds moved. Issuer declines, `ERR_DO_NOT_RETRY` and `ERR_RISK_REJECTED` record the transaction (`data`, `failed` or `cancelled`); the others record nothing (`data` null). `ERR_INVALID_CARD_TOKEN`: a `vault_token` unknown, revoked or another merchant's; `ERR_EXPIRED_CARD` also for a saved card past its expiry. Also `ERR_AUTH_FAILED`: a partner's `merchant_id` that is not linked.",
          failure(
            [
              ...CARD_DECLINES,
              'ERR_3DS_REQUIRED',
              'ERR_3DS_FAILED',
              'ERR_3DS_TIMEOUT',
              'ERR_DO_NOT_RETRY',
              'ERR_RISK_REJECTED',
              'ERR_INVALID_CARD_TOKEN',
              'ERR_PAYMENT_METHOD_NOT_ENABLED',
              'ERR_ADAPTER_INVALID_AMOUNT',
              'ERR_AUTH_FAILED',
            ],
            transactionSchema.nullable(),
          ),
        ),
        409: answer(
          "`ERR_DUPLICATE`: an active transaction holds the reference: `data.transaction_id`, and `data.payment_session_id` when it is a payment session's.",
          failure(['ERR_DUPLICATE'], duplicateSchema),
        ),
        422: invalid,
        ...bodyTooLarge,
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/transactions/{id}/status',
      operationId: 'getTransactionStatus',
      summary: 'Read a transaction',
      tags: ['Transactions'],
      security: KEY,
      requestParams: { path: transactionPath },
      responses: {
        200: answer('The transaction.', success(transactionSchema)),
        ...notFound('transaction'),
        ...apiAnswers,
      },
    },
    operation(
      'capture',
      'Capture an auth',
      'Captures `amount` of an `auth` once, before its `capture_before` (then it lapses: `cancelled`): a `capture` record.',
      {
        amount: 12.34,
      },
    ),
    operation(
      'refund',
      'Refund a captured payment',
      'Refunds `amount` of what was captured: a `refund` record.',
      {
        amount: 2,
        reason: 'damaged',
      },
      {
        codes: ['ERR_REFUND_NOT_SUPPORTED'],
        text: ', `ERR_REFUND_NOT_SUPPORTED` (a payment session paid with a method that does not refund; nothing recorded)',
      },
    ),
    operation(
      'void',
      'Void an auth',
      'Voids an `auth` that was not captured and has not lapsed: a `void` record.',
      {
        amount: 12.34,
        reason: 'out of stock',
      },
    ),
    {
      method: 'post',
      path: '/api/v1/payment-sessions',
      operationId: 'createPaymentSession',
      summary: 'Open a hosted redirect session',
      description:
        "No card, token, CVV or voucher field anywhere in the body. Checks in order: the method is enabled (for the currency), the customer's country, then the provider. A customer last name `PROVIDER_REJECT` or `PROVIDER_DOWN` makes the provider refuse or fail.",
      tags: ['Payment sessions'],
      security: KEY,
      requestBody: json(createSessionSchema, {
        amount: 25,
        currency: 'EUR',
        reference: 'order-1002',
        payment_method: 'ideal',
        customer: { first_name: 'Ada', last_name: 'Lovelace', country_code: 'NL' },
        success_url: 'https://shop.example/checkout/return',
        cancel_url: 'https://shop.example/checkout/cancel',
      }),
      responses: {
        201: answer(
          'Created: `pending_redirect`; send the customer to `checkout_url`.',
          success(sessionAnswerSchema),
        ),
        400: answer(
          `\`ERR_PAYMENT_METHOD_NOT_ENABLED\`, \`ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY\`, \`ERR_ADAPTER_INVALID_AMOUNT\`, \`ERR_WEBHOOK_NOT_READY\` (nothing created), \`ERR_PROVIDER_REJECTED\` (\`data\` the failed session), or ${partnerMerchant}`,
          failure(
            [
              'ERR_PAYMENT_METHOD_NOT_ENABLED',
              'ERR_PAYMENT_METHOD_NOT_AVAILABLE_IN_COUNTRY',
              'ERR_ADAPTER_INVALID_AMOUNT',
              'ERR_WEBHOOK_NOT_READY',
              'ERR_PROVIDER_REJECTED',
              'ERR_AUTH_FAILED',
            ],
            sessionAnswerSchema.nullable(),
          ),
        ),
        409: answer(
          "`ERR_DUPLICATE`: an active session or transaction holds the reference: `data.transaction_id`, and `data.payment_session_id` when it is a session's.",
          failure(['ERR_DUPLICATE'], duplicateSchema),
        ),
        422: invalid,
        502: answer(
          '`ERR_GATEWAY_ERROR`: the provider could not prepare the session; it is `failed`.',
          failure(['ERR_GATEWAY_ERROR'], sessionAnswerSchema),
        ),
        ...bodyTooLarge,
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/payment-sessions/{sessionId}',
      operationId: 'getPaymentSession',
      summary: 'Read a payment session',
      tags: ['Payment sessions'],
      security: KEY,
      requestParams: { path: sessionPath },
      responses: {
        200: answer('The session.', success(sessionAnswerSchema)),
        ...notFound('session'),
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/payment-methods',
      operationId: 'listPaymentMethods',
      summary: 'Redirect methods enabled for the account',
      description:
        'Configuration only, advisory; `available` and its reasons are computed when a filter is given.',
      tags: ['Payment sessions'],
      security: KEY,
      requestParams: { query: paymentMethodsQuery },
      responses: {
        200: answer('The list.', success(paymentMethodsSchema)),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        422: invalid,
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/payment-instruments',
      operationId: 'listPaymentInstruments',
      summary: "A customer's cards on file, newest first",
      description:
        'Active instruments only (a revoked one is read back by revoking it again). Partner keys name a linked `merchant_id`.',
      tags: ['Payment instruments'],
      security: KEY,
      requestParams: { query: instrumentListQuery },
      responses: {
        200: answer('A page of instruments.', success(instrumentListSchema)),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        422: answer(
          '`ERR_VALIDATION_FAILED`: no `merchant_customer_id`, or a bad `per_page` or `page`.',
          failure(['ERR_VALIDATION_FAILED']),
        ),
        ...apiAnswers,
      },
    },
    {
      method: 'delete',
      path: '/api/v1/payment-instruments/{vaultToken}',
      operationId: 'revokePaymentInstrument',
      summary: 'Revoke a card on file',
      description:
        'The token pays no more (`ERR_INVALID_CARD_TOKEN`). Revoking again answers the same record, `revoked_at` unchanged. Saving the card again gives it a new token.',
      tags: ['Payment instruments'],
      security: KEY,
      requestParams: { path: instrumentPath },
      responses: {
        200: answer('The instrument, `revoked`.', success(instrumentSchema)),
        ...notFound('instrument'),
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/webhook',
      operationId: 'getWebhookEndpoint',
      summary: 'Read the webhook endpoint',
      tags: ['Webhooks'],
      security: KEY,
      requestParams: { query: merchantQuery },
      responses: {
        200: answer('The endpoint (never its secret).', success(endpointSchema)),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        ...notFound('endpoint yet'),
        ...apiAnswers,
      },
    },
    {
      method: 'put',
      path: '/api/v1/webhook',
      operationId: 'putWebhookEndpoint',
      summary: 'Create or update the webhook endpoint',
      description:
        'The first PUT creates it (one per merchant) and shows the signing secret once; later ones update it and never show or change the secret. `events` omitted keeps the subscription, null resets it to the default (all but `transaction.pending`).',
      tags: ['Webhooks'],
      security: KEY,
      requestBody: json(putSchema, { url: 'https://shop.example/webhooks/gateway', is_active: true }),
      responses: {
        200: answer('Updated.', success(endpointSchema)),
        201: answer('Created: the endpoint and its secret.', success(endpointWithSecretSchema)),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        422: answer(
          '`ERR_VALIDATION_FAILED`: the body, or a URL that is not HTTPS on a public host.',
          failure(['ERR_VALIDATION_FAILED']),
        ),
        ...bodyTooLarge,
        ...apiAnswers,
      },
    },
    {
      method: 'delete',
      path: '/api/v1/webhook',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete the webhook endpoint',
      description: 'Deliveries stop, queued events fail, the URL and secret are erased; the history stays.',
      tags: ['Webhooks'],
      security: KEY,
      requestParams: { query: merchantQuery },
      responses: {
        200: answer('Deleted.', success(z.null())),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        ...notFound('endpoint'),
        ...apiAnswers,
      },
    },
    {
      method: 'post',
      path: '/api/v1/webhook/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret',
      description: 'A hard cutover: the old secret stops signing at once.',
      tags: ['Webhooks'],
      security: KEY,
      requestBody: json(merchantOnlyBody),
      responses: {
        200: answer('The endpoint and its new secret.', success(endpointWithSecretSchema)),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        ...notFound('endpoint'),
        422: invalid,
        ...bodyTooLarge,
        ...apiAnswers,
      },
    },
    {
      method: 'post',
      path: '/api/v1/webhook/test',
      operationId: 'testWebhookEndpoint',
      summary: 'Send a signed test ping',
      description: 'Synchronous; 200 whether or not the receiver answered 2xx. 10 a minute per key.',
      tags: ['Webhooks'],
      security: KEY,
      requestBody: json(merchantOnlyBody),
      responses: {
        200: answer('What the receiver answered.', success(pingSchema)),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        ...notFound('endpoint'),
        422: invalid,
        ...bodyTooLarge,
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/webhook/events',
      operationId: 'listWebhookEvents',
      summary: 'List webhook events, newest first',
      description:
        'Kept 30 days. `from` and `to` are on or after / on or before (a date alone covers its day).',
      tags: ['Webhooks'],
      security: KEY,
      requestParams: { query: listQuery.extend(merchantQuery.shape) },
      responses: {
        200: answer('A page of events.', success(eventListSchema)),
        400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
        422: invalid,
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/webhook/events/{eventId}',
      operationId: 'getWebhookEvent',
      summary: 'Read a webhook event, with its payload and every delivery attempt',
      tags: ['Webhooks'],
      security: KEY,
      requestParams: { path: eventPath },
      responses: {
        200: answer('The event.', success(eventDetailSchema)),
        ...notFound('event'),
        ...apiAnswers,
      },
    },
    {
      method: 'post',
      path: '/api/v1/webhook/events/{eventId}/replay',
      operationId: 'replayWebhookEvent',
      summary: 'Deliver an event again',
      description:
        'The same id and payload, a new delivery id, `X-Service-Replay: true`. 30 a minute per key.',
      tags: ['Webhooks'],
      security: KEY,
      requestParams: { path: eventPath },
      requestBody: json(merchantOnlyBody),
      responses: {
        200: answer('Queued.', success(z.object({ event: eventRowSchema }))),
        400: answer(
          `\`ERR_WEBHOOK_NOT_CONFIGURED\`: no active endpoint to replay to; or ${partnerMerchant}`,
          failure(['ERR_WEBHOOK_NOT_CONFIGURED', 'ERR_AUTH_FAILED']),
        ),
        ...notFound('event'),
        409: answer(
          '`ERR_REPLAY_NOT_ALLOWED`: the event is still being delivered.',
          failure(['ERR_REPLAY_NOT_ALLOWED']),
        ),
        422: invalid,
        ...bodyTooLarge,
        ...apiAnswers,
      },
    },
    {
      method: 'get',
      path: '/api/v1/api-key',
      operationId: 'getApiKey',
      summary: 'What the calling key is',
      description:
        "Merchant keys: their `merchant_id`; partner keys: the `linked_merchant_ids` they may act for. With the key's scopes and rate limit. Never the key's text nor a secret (sandbox.md section 11: a gateway without this endpoint answers 404).",
      tags: ['API key'],
      security: KEY,
      responses: {
        200: answer('The key.', success(apiKeySchema)),
        ...apiAnswers,
      },
    },
    hostedPage(
      '/hosted/3ds/{publicId}',
      'challengePage',
      'The 3DS challenge page',
      "The verification's `challenge_url`: Authenticate and Fail, while the challenge is open (10 minutes).",
      z.object({ publicId: z.string().meta({ description: '`tds_...`' }) }),
      'challenge',
    ),
    hostedButton(
      '/hosted/3ds/{publicId}',
      'answerChallenge',
      'Answer the 3DS challenge',
      "The page's buttons: back to `auth_url` with `card_verification_id` and `status`.",
      z.object({ publicId: z.string().meta({ description: '`tds_...`' }) }),
      z.enum(['authenticate', 'fail']),
      'challenge',
    ),
    hostedPage(
      '/hosted/checkout/{sessionId}',
      'checkoutPage',
      'The hosted checkout page',
      "The session's `checkout_url`: Pay, Pending, Fail and Cancel, while the session is open.",
      sessionPath,
      'session',
    ),
    hostedButton(
      '/hosted/checkout/{sessionId}',
      'answerCheckout',
      'Answer the hosted checkout',
      "The page's buttons: back to `success_url` (or `cancel_url`) with `payment_session_id`, `reference` and `status`.",
      sessionPath,
      z.enum(Object.keys(ACTIONS) as [string, ...string[]]),
      'session',
    ),
    control({
      method: 'get',
      path: '/sandbox/clock',
      operationId: 'readClock',
      summary: 'Read the sandbox clock',
      description: 'The time the sandbox runs on: real time, plus every `/sandbox/clock/advance` so far.',
      responses: { 200: answer('The time.', success(z.object({ now: z.iso.datetime() }))) },
    }),
    control({
      path: '/sandbox/clock/advance',
      operationId: 'advanceClock',
      summary: 'Move the sandbox clock forward',
      description:
        'Expiries, retries and windows follow the sandbox clock; run `/sandbox/tick` to do what came due.',
      requestBody: json(advanceSchema, { seconds: 600 }),
      responses: {
        200: answer('The new time.', success(z.object({ now: z.iso.datetime() }))),
        422: invalid,
        ...bodyTooLarge,
      },
    }),
    control({
      path: '/sandbox/tick',
      operationId: 'tick',
      summary: 'Run the work that is due',
      description:
        'Expires challenges and sessions, lapses auths past `capture_before`, sends due webhook attempts and replays, prunes old events. (Every request already does the expiries and lapses due before it runs.)',
      responses: { 200: answer('What ran.', success(tickReportSchema)) },
    }),
    control({
      path: '/sandbox/payment-sessions/{sessionId}/settle',
      operationId: 'settleSession',
      summary: 'Settle a session as the provider would',
      requestParams: { path: sessionPath },
      requestBody: json(settleSchema, { outcome: 'paid' }),
      responses: {
        200: answer('The session, settled.', success(sessionAnswerSchema)),
        ...notFound('session'),
        409: answer(
          '`ERR_INVALID_TRANSACTION`: the session is no longer open.',
          failure(['ERR_INVALID_TRANSACTION']),
        ),
        422: invalid,
        ...bodyTooLarge,
      },
    }),
    control({
      path: '/sandbox/transactions/{id}/chargeback',
      operationId: 'chargeBack',
      summary: 'Charge back a captured payment',
      description:
        'The payment becomes `chargeback` (a captured auth and its capture record both; its session, if any, too) and `transaction.chargeback` is recorded. `amount` (major units) defaults to what was captured and not refunded; `chargeback_amount` says what was taken. A refund of it is then 400 `ERR_INVALID_TRANSACTION`.',
      requestParams: { path: transactionPath },
      requestBody: json(chargebackSchema, { amount: 5 }),
      responses: {
        200: answer('The transaction, charged back.', success(transactionSchema)),
        400: answer(
          '`ERR_INVALID_TRANSACTION`: only a captured payment.',
          failure(['ERR_INVALID_TRANSACTION']),
        ),
        ...notFound('transaction'),
        422: answer(
          '`ERR_VALIDATION_FAILED` on `errors.amount`: not a positive amount in the currency, or more than was captured and not refunded.',
          failure(['ERR_VALIDATION_FAILED']),
        ),
        ...bodyTooLarge,
      },
    }),
    control({
      path: '/sandbox/transactions/{id}/chargeback/reverse',
      operationId: 'reverseChargeback',
      summary: 'Reverse a chargeback: the merchant won the dispute',
      description:
        'The payment is `captured` again with `chargeback_amount` 0 (its session `paid` again) and `transaction.chargeback_reversed` is recorded (in the default event set).',
      requestParams: { path: transactionPath },
      responses: {
        200: answer('The transaction, captured again.', success(transactionSchema)),
        400: answer(
          '`ERR_INVALID_TRANSACTION`: only a charged-back payment.',
          failure(['ERR_INVALID_TRANSACTION']),
        ),
        ...notFound('transaction'),
      },
    }),
    control({
      path: '/sandbox/webhook/outage',
      operationId: 'webhookOutage',
      summary: "Fail the merchant's webhook deliveries for a while",
      description: 'Merchant keys only.',
      requestBody: json(outageSchema, { seconds: 3600 }),
      responses: {
        200: answer(
          'Until when.',
          success(z.object({ merchant_id: z.number().int(), until: z.iso.datetime() })),
        ),
        422: invalid,
        ...bodyTooLarge,
      },
    }),
    ...documentationRoutes('Documentation'),
  ],
};
