/**
 * The sandbox's own controls (`/sandbox/*`, `x-sandbox-only`): the clock, due work, settlements,
 * chargebacks, outages.
 */
import { z } from 'zod';
import type { ApiRoute } from '../../../shared/api-document.js';
import {
  advanceSchema,
  chargebackSchema,
  outageSchema,
  settleSchema,
} from '../../routes/sandbox-controls.js';
import {
  failure,
  sessionAnswerSchema,
  success,
  tickReportSchema,
  transactionSchema,
} from '../response-schemas.js';
import {
  answer,
  authFailed,
  bodyTooLarge,
  invalid,
  json,
  KEY,
  notFound,
  partnerMerchant,
  sessionPath,
  transactionPath,
  unexpected,
} from './common.js';

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

/** Every /sandbox/* control. */
export const controlRoutes: ApiRoute[] = [
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
    description:
      "The key's merchant's: a merchant key's own account, or the linked `merchant_id` a partner key names (each merchant's endpoint has its own deliveries).",
    requestBody: json(outageSchema, { seconds: 3600 }),
    responses: {
      200: answer(
        'Until when.',
        success(z.object({ merchant_id: z.number().int(), until: z.iso.datetime() })),
      ),
      400: answer(partnerMerchant, failure(['ERR_AUTH_FAILED'])),
      422: invalid,
      ...bodyTooLarge,
    },
  }),
];
