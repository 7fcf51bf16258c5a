/** Gateway money with no order: listed, attached to an order, resolved with a note. */
import { z } from 'zod';
import { type ApiRoute, jsonAnswer } from '../../../shared/api-document.js';
import { unmatchedMoneySchema } from '../finance-schemas.js';
import { failure, invalidStateSchema, orderSchema, success } from '../response-schemas.js';
import { attachSchema, resolveSchema, unmatchedListQuerySchema } from '../schemas.js';
import {
  BY,
  databaseDown,
  forbidden,
  internal,
  invalidInput,
  json,
  OPS,
  unauthorized,
  unreadable,
} from './common.js';

const unmatchedPath = z.object({
  id: z.string().meta({ description: 'The id of the gateway money with no order (`umn_...`).' }),
});
const unmatchedNotFound = {
  404: jsonAnswer(
    "`NOT_FOUND`: no gateway money with no order has this id (`errors.id`), or none of the token's merchants (platform mode: the same answer).",
    failure(['NOT_FOUND']),
  ),
};
const unmatchedStateSchema = z
  .object({ resolution: z.enum(['open', 'attached', 'resolved']), allowed: z.array(z.literal('open')) })
  .meta({
    id: 'UnmatchedState',
    description: "The money's resolution and the one the action is allowed from.",
  });

/** GET /unmatched-money, POST /unmatched-money/{id}/attach and /resolve. */
export const unmatchedMoneyRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/unmatched-money',
    operationId: 'listUnmatchedMoney',
    summary: 'Gateway money with no order',
    description:
      "Every gateway transaction naming money that no payment attempt of the kit holds, newest first (by first sight): kept when an event, a replay, recovery or a poll told of it, and the order carrying its reference flagged for review; each with the captured, refunded and charged-back amounts of its payment, read by the rules of an order (a reversed chargeback gives its amount back). `resolution=open` for what still waits for an operator. Each row names its `merchant_id` (platform mode: the merchant whose webhook endpoint its event came to); `merchant_id` in the query keeps that merchant's money only, and a token scoped to some merchants sees theirs alone (another merchant named is a 403). Roles: operator, finance, viewer, admin (a `storefront` token is a 403).",
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
    description: `The payment goes to the order through the one apply path, as the gateway's news of it: its current attempt takes it (or a new attempt does, when the order has none or its last one ended), and the order shows it; an amount that is not the order's is flagged for review. A capture, refund or void goes to the order whose payment it belongs to. Platform mode: money goes to an order of its own merchant only (another merchant's order is a 422 naming \`order_id\`), and a token scoped to some merchants meets another merchant's money as unknown money (404) and another merchant's order as an unknown order (422). Roles: finance, admin; the audit log gets a line.${BY}`,
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
        "`VALIDATION_FAILED`: `errors` names the field: `order_id` when no order has it (or none the token's merchants have), the order is in another currency or of another merchant than the money's, or it does not hold the payment a capture, refund or void belongs to.",
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
    description: `What a person found (a test payment, money refunded at the gateway, another shop's payment), kept with the money: it leaves the open list and stays in the report. The note is required, at most 512 characters, with no card number. A token scoped to some merchants resolves its merchants' money alone (another's is a 404, as unknown money). Roles: finance, admin; the audit log gets a line.${BY}`,
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
];
