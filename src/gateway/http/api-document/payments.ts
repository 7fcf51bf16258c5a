/** Card payments: 3D Secure, the sale or auth, its status, and capture, refund and void. */
import { z } from 'zod';
import type { ApiRoute } from '../../../shared/api-document.js';
import { verifySchema } from '../../routes/three-ds.js';
import { initiateSchema, operationSchemas } from '../../routes/transactions.js';
import {
  duplicateSchema,
  failure,
  success,
  transactionSchema,
  verificationSchema,
} from '../response-schemas.js';
import { answer, apiAnswers, bodyTooLarge, invalid, json, KEY, notFound, transactionPath } from './common.js';

const TEST_CARD = { number: '4242424242424242', exp_month: '12', exp_year: 2030, cvv: '123' };

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

/** POST /api/v1/3ds/verify and /api/v1/transactions, GET a transaction's status, then its operations. */
export const paymentRoutes: ApiRoute[] = [
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
];
