/** Capture, refund and void: an operator's, on an order's payment. */
import { z } from 'zod';
import { type ApiRoute, jsonAnswer } from '../../../shared/api-document.js';
import { failure, invalidStateSchema, operationAnswerSchema, success } from '../response-schemas.js';
import { captureSchema, refundSchema, voidSchema } from '../schemas.js';
import {
  BY,
  forbidden,
  internal,
  json,
  MERCHANT_KEY_TEXT,
  merchantKeySchema,
  OPS,
  orderNotFound,
  orderPath,
  retryAfter,
  unauthorized,
  unreadable,
} from './common.js';

const disputedSchema = z
  .object({ status: z.literal('disputed'), disputed_amount: z.number().int() })
  .meta({ id: 'Disputed', description: 'The order is disputed: what the chargeback took, in minor units.' });

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
        `\`INVALID_STATE\` (the order's status does not allow it; \`data\` the status and those allowed), \`IDEMPOTENCY_CONFLICT\` (the key was used for another request), \`EARLIER_REQUEST_SETTLED\` (an earlier request of this kind under another key had no answer: it was settled first with its own key and this one not made; \`data\` the order and that operation; send this again if you mean another), \`REFUND_NOT_SUPPORTED\` (the payment's method takes no refunds: nothing was refunded, the order is unchanged, its history says so), \`ORDER_DISPUTED\` (a refund of a charged-back payment: the bank took the money back already, so nothing was refunded; \`data\` the status and the disputed amount), ` +
          `${MERCHANT_KEY_TEXT} Or the gateway's refusal (\`ERR_INVALID_TRANSACTION\`, ...; \`data\` the order and the operation).`,
        failure(
          'gateway',
          z.union([invalidStateSchema, operationAnswerSchema, disputedSchema, merchantKeySchema, z.null()]),
        ),
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

/** POST /orders/{id}/capture, refund and void. */
export const operationRoutes: ApiRoute[] = [
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
];
