/** Chargebacks: listed, and recorded as lost by a person. */
import { z } from 'zod';
import { type ApiRoute, jsonAnswer } from '../../../shared/api-document.js';
import { disputeSchema, failure, success } from '../response-schemas.js';
import { disputeListQuerySchema, loseDisputeSchema } from '../schemas.js';
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

const disputePath = z.object({ id: z.string().meta({ description: 'The dispute id (`dsp_...`).' }) });
const disputeStateSchema = z
  .object({ outcome: z.enum(['open', 'won', 'lost']), allowed: z.array(z.literal('open')) })
  .meta({ id: 'DisputeState', description: "The dispute's outcome and the one the action is allowed from." });

/** GET /disputes, POST /disputes/{id}/lost. */
export const disputeRoutes: ApiRoute[] = [
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
];
