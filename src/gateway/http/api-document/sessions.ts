/** Hosted redirect payments (sessions), the payment methods on offer, and cards on file (instruments). */
import { z } from 'zod';
import type { ApiRoute } from '../../../shared/api-document.js';
import { listQuery as instrumentListQuery } from '../../routes/payment-instruments.js';
import { query as paymentMethodsQuery } from '../../routes/payment-methods.js';
import { createSchema as createSessionSchema } from '../../routes/payment-sessions.js';
import {
  duplicateSchema,
  failure,
  instrumentListSchema,
  instrumentSchema,
  paymentMethodsSchema,
  sessionAnswerSchema,
  success,
} from '../response-schemas.js';
import {
  answer,
  apiAnswers,
  bodyTooLarge,
  invalid,
  json,
  KEY,
  notFound,
  partnerMerchant,
  sessionPath,
} from './common.js';

const instrumentPath = z.object({ vaultToken: z.string().meta({ description: '`vt_...`' }) });

/** /api/v1/payment-sessions, /api/v1/payment-methods and /api/v1/payment-instruments. */
export const sessionRoutes: ApiRoute[] = [
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
];
