/** Payment links (issue 43, part 3): made by the shop for an order, opened by its shopper's browser. */
import { z } from 'zod';
import { type ApiRoute, htmlAnswer, jsonAnswer } from '../../../shared/api-document.js';
import { CLOSE_REASONS, ORDER_STATUSES } from '../../orders/status.js';
import { failure, orderSchema, paymentLinkSchema, success } from '../response-schemas.js';
import { paymentLinkSchema as paymentLinkRequestSchema } from '../schemas.js';
import {
  BY,
  forbidden,
  gatewayFailed,
  internal,
  json,
  OPS,
  orderNotFound,
  orderPath,
  retryAfter,
  unauthorized,
  unreadable,
} from './common.js';

const LIMITS =
  'Each visit that would ask the gateway counts toward `LIMIT_LANDING_PER_ADDRESS` and `LIMIT_LANDING_PER_ORDER`; past them it still answers, from the database (to a session it knows is open, else a 429 page).';

/** POST /orders/{id}/payment-link and GET /pay/{token}. */
export const paymentLinkRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/orders/{id}/payment-link',
    operationId: 'createPaymentLink',
    summary: 'Make a payment link for an order',
    description: `A URL of the kit's (\`PUBLIC_BASE_URL/pay/<token>\`) the shop sends its shopper (an invoice, an e-mail, a chat): each visit sends the browser to the order's open hosted checkout page, or opens a new hosted session of \`payment_method\` when none is open (the last one failed, was cancelled or expired). One payment at most, however often the link is opened or shared. While the link lives (\`expires_in\`: a minute to 30 days), the order does not end by \`ORDER_TTL\`; once it is over, the order ends as any other. \`payment_method\` must be one the gateway offers for the order's currency (and its customer's country, when the order names one): the gateway's list is asked first. An order may have several links. The token is in the URL alone and the kit keeps its SHA-256: the URL is shown this once. The order's history gets a line and the audit log an \`order.payment_link\` line, each naming who made it. Roles: storefront, operator, admin.${BY}`,
    tags: ['Orders'],
    security: OPS,
    requestParams: { path: orderPath },
    requestBody: json(paymentLinkRequestSchema, { expires_in: 604800, payment_method: 'ideal' }),
    responses: {
      201: jsonAnswer(
        'Made. `payment_link.url` is what the shopper opens; it is not shown again.',
        success(z.object({ payment_link: paymentLinkSchema })),
      ),
      ...unauthorized,
      ...forbidden,
      ...orderNotFound,
      409: jsonAnswer(
        '`ORDER_CLOSED`: the order ended (`closed`: cancelled, or expired by `ORDER_TTL`; `data.closed_reason`). `ORDER_PAID`: the order holds money (paid, authorised, refunded, disputed): there is nothing to pay. `INVALID_STATE`: the order is past paying for (`voided`). `PAYMENT_IN_PROGRESS`: a payment of the order was under way for the whole wait (20 s); try again after `Retry-After`. Nothing was made; `data.order` is the order as it stands.',
        failure(
          ['ORDER_CLOSED', 'ORDER_PAID', 'INVALID_STATE', 'PAYMENT_IN_PROGRESS'],
          z.object({
            order: orderSchema,
            status: z.enum(ORDER_STATUSES).optional(),
            closed_reason: z.enum(CLOSE_REASONS).nullable().optional(),
            allowed: z.array(z.enum(ORDER_STATUSES)).optional(),
          }),
        ),
        retryAfter.partial(),
      ),
      422: jsonAnswer(
        '`VALIDATION_FAILED`: `errors` names each field: `expires_in` (whole seconds, 60 to 2592000), `payment_method` (missing, or not one the gateway offers for this order: the message lists those it does).',
        failure(['VALIDATION_FAILED']),
      ),
      502: gatewayFailed[502],
      503: jsonAnswer(
        "`GATEWAY_UNAVAILABLE`: the gateway's list of methods could not be read (down, or slowing the key down); `GATEWAY_BUSY`: the API key's budget for checkout traffic is spent for now; `UNAVAILABLE`: the database cannot be reached. Nothing was made: send the request again (after `Retry-After` when given).",
        failure(
          ['GATEWAY_UNAVAILABLE', 'GATEWAY_BUSY', 'UNAVAILABLE'],
          z.object({ gateway_code: z.string() }).nullable(),
        ),
        retryAfter.partial(),
      ),
      ...unreadable,
      ...internal,
    },
  },
  {
    method: 'get',
    path: '/pay/{token}',
    operationId: 'visitPaymentLink',
    summary: 'Open a payment link',
    description: `What the shopper's browser opens (no credential: the token is the link). A visit sends the browser (303) to the order's open hosted checkout page, asking the gateway first whether the current session is still open; when none is, it opens a new hosted session of the link's method (the order's customer as the order names them, the device address the kit sees) and sends the browser there. Visits take the order's payment turn one at a time, so visits at once, from any number of browsers, go to one session: one payment at most. A paid order, a closed one and an expired link answer a small page saying so. ${LIMITS}`,
    tags: ['Browser'],
    security: [],
    requestParams: {
      path: z.object({ token: z.string().meta({ description: "The link's token (`plt_...`)." }) }),
    },
    responses: {
      303: {
        description: "To the order's hosted checkout page (the gateway's), open or just opened.",
        headers: z.object({ Location: z.string().meta({ description: 'The hosted checkout page.' }) }),
      },
      200: htmlAnswer(
        'A page in words (`data-link` on its `main`): the order is already paid (`paid`), closed (`ended`), a payment of it is being confirmed (`wait`), or the gateway refused to open a session (`refused`: a provider refusal, the failed-attempt cap).',
      ),
      // `/pay/` with no token at all matches no route: the app's JSON not-found, as for any other path.
      404: {
        description:
          'No link has this token: a page that says so. A path with no token at all (`/pay/`) is no route of the kit: the JSON `NOT_FOUND` every unknown path answers.',
        content: {
          'text/html': { schema: { type: 'string' } },
          'application/json': { schema: failure(['NOT_FOUND']) },
        },
      },
      410: htmlAnswer(
        'The link has expired: a page that says so (a paid or closed order says that instead).',
      ),
      429: htmlAnswer('Over the limits, with no open session known: a page asking to wait a minute.'),
      503: htmlAnswer(
        'The gateway could not open a session now: nothing was charged; a page asking to try again.',
      ),
    },
  },
];
