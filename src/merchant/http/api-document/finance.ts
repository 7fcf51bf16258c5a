/** Finance's reads: the reconciliation report and the audit export. */
import type { ApiRoute } from '../../../shared/api-document.js';
import { auditSchema, reportSchema } from '../finance-schemas.js';
import { reportQuerySchema } from '../report-routes.js';
import { success } from '../response-schemas.js';
import { auditQuerySchema } from '../schemas.js';
import { databaseDown, forbidden, internal, invalidInput, OPS, unauthorized } from './common.js';

/** GET /reports/reconciliation. */
export const reconciliationRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/reports/reconciliation',
    operationId: 'reconciliationReport',
    summary: 'The reconciliation report',
    description:
      "One row per order created in [`from`, `to`) beside what the gateway last said of its transaction, classified `matched`, `in_flight`, `mismatched` or `resolved` (a difference a person resolved the review of) with the reason and the order's `review`, and totals per currency in minor units, and per merchant and currency (`totals_by_merchant`: each row names its `merchant_id`, platform mode); beside them, `unmatched_money`: gateway money no payment attempt holds, first seen in the range, with its own totals per currency (captured, refunded, charged back and net after chargebacks, each payment read as an order's is). `format=csv`: the same rows as CSV, one header line; when the range has gateway money with no order, a blank line and a second table of it follow, with its own header line. `refresh=true` first asks the gateway about every row not matched, within the shared budget. `merchant_id`: one merchant's orders only and their totals, and that merchant's `unmatched_money` (the money whose events came to its webhook endpoint) and its totals; a token scoped to some merchants reads theirs alone. Roles: finance, admin.",
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
];

/** GET /audit. */
export const auditRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/audit',
    operationId: 'auditExport',
    summary: 'The audit export: who did what',
    description:
      'Every act a person (or the kit on their settings) did in [`from`, `to`), oldest first: capture, refund and void (with what became of them at the gateway), reviews resolved, gateway money attached or resolved, disputes lost, operators added and revoked; who (name, role, credential), on what order and subject, the amount, the reason or note, and the request. CSV by default (one header line, a line per act, streamed); `format=json` for the same lines as JSON. Each line names the merchant whose order it is about (`merchant_id`, platform mode); `merchant_id` in the query keeps the lines about the orders of that merchant only. Roles: finance, admin.',
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
];
