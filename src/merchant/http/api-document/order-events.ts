/**
 * The order events the kit sends to the shop's endpoints (SHOP_WEBHOOK_URLS; issue 20), as the
 * document's webhooks: one a type, each body the order as the operators' routes show it.
 */
import { z } from 'zod';
import type { ApiWebhook } from '../../../shared/api-document.js';
import { ORDER_EVENT_TYPES, type OrderEventType } from '../../orders/order-events.js';
import { orderEventPayload, type ViewedAttempt, type ViewedOrder } from '../../orders/order-view.js';
import { SEND_TIMEOUT_MS } from '../../outbox/endpoint.js';
import { orderSchema } from '../response-schemas.js';

/** When each is sent (orders/order-events.ts, orderEventsOf). */
const WHEN: Record<OrderEventType, string> = {
  'order.authorized':
    'The payment is authorized (`mode: auth`) and not yet captured: capture or void it before `capture_before`.',
  'order.paid': 'The order is paid: a sale approved, or an authorization captured.',
  'order.partially_refunded':
    'Part of the payment is refunded (`refunded_amount`, the running total); sent again for each further partial refund.',
  'order.refunded': 'The payment is refunded in full.',
  'order.voided': 'The authorization is voided: no money moved.',
  'order.failed':
    "The payment failed (`failure_code`, the gateway's code); the shopper may try again (a new attempt).",
  'order.cancelled':
    'The payment was abandoned (the shopper cancelled the hosted checkout, or the gateway cancelled it); a new attempt may follow.',
  'order.expired':
    'The payment timed out (the hosted checkout session expired), or an authorization lapsed uncaptured after `capture_before`.',
  'order.disputed': 'A chargeback took the money back (`disputed_amount`).',
  'order.dispute_won':
    'A chargeback was reversed: the order is back to paid (or partially refunded, or refunded) and `disputed_amount` is 0.',
  'order.needs_review':
    "The order was flagged for review with a new reason (`review_reason`): its money does not add up (another amount, a second capture). An operator resolves it. Sent after the change's status event, if it has one.",
  'order.closed':
    'The order ended (`closed`): cancelled by the shop (`POST /orders/{id}/cancel`) or unpaid past `ORDER_TTL` (`closed_reason`: `cancelled` or `expired`). It takes no more payments. Money that still reaches it (a hosted page paid at the last second) is applied and flagged: `order.paid` and `order.needs_review` follow.',
};

/** Each in a few words: Swagger UI's line for it, beside its name. */
const SUMMARY: Record<OrderEventType, string> = {
  'order.authorized': 'Payment authorized, to capture or void',
  'order.paid': 'Order paid',
  'order.partially_refunded': 'Part of the payment refunded',
  'order.refunded': 'Payment refunded in full',
  'order.voided': 'Authorization voided',
  'order.failed': 'Payment failed',
  'order.cancelled': 'Payment abandoned',
  'order.expired': 'Payment timed out',
  'order.disputed': 'Chargeback',
  'order.dispute_won': 'Chargeback reversed',
  'order.needs_review': 'Flagged for review',
  'order.closed': 'Order ended: cancelled, or expired unpaid',
};

/** `order.partially_refunded` -> `OrderPartiallyRefundedEvent`. */
const schemaId = (type: OrderEventType) =>
  `Order${type
    .slice('order.'.length)
    .split('_')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}Event`;

/** The body of one type of event (orders/order-view.ts, orderEventPayload: Standard Webhooks' shape). */
function eventSchema<T extends OrderEventType>(type: T) {
  return z
    .object({
      type: z.literal(type),
      timestamp: z.iso
        .datetime()
        .meta({ description: 'When the order changed: the time of the change, not of this try.' }),
      data: z.object({ order: orderSchema }).meta({
        description:
          "The order just after the change, as the operators see it (`GET /orders/{id}` with a reader's token shows it with its history).",
      }),
    })
    .meta({ id: schemaId(type), description: `\`${type}\`: ${WHEN[type]}` });
}

const EVENT_SCHEMAS = ORDER_EVENT_TYPES.map(eventSchema);
/** Any order event, by its `type`: the body an endpoint of the shop is sent. */
export const orderEventSchema = z.discriminatedUnion('type', [EVENT_SCHEMAS[0]!, ...EVENT_SCHEMAS.slice(1)]);
export type DocumentedOrderEvent = z.output<typeof orderEventSchema>;

/**
 * Each type's example: a body the kit's own orderEventPayload writes, of a 12.34 EUR order paid by card
 * as the event finds it (the linter checks each against its schema).
 */
function example(type: OrderEventType) {
  const at = new Date('2026-03-02T09:30:00.000Z');
  const order: ViewedOrder = {
    id: 'ord_1W3k9Qm2Zx8Yv4Ta7Lp0Rs5N',
    merchant_id: 1001,
    reference: 'shop-10042',
    status: 'paid',
    amount_minor: 1234,
    currency: 'EUR',
    captured_minor: 1234,
    refunded_minor: 0,
    disputed_minor: 0,
    description: 'Two books',
    customer: { merchant_customer_id: 'cus-77', email: 'ada@example.com', country_code: 'GB' },
    failure_code: null,
    needs_review: false,
    review_reason: null,
    closed_reason: null,
    closed_at: null,
    created_at: new Date('2026-03-02T09:28:00.000Z'),
    updated_at: at,
  };
  const attempt: ViewedAttempt = {
    id: 'att_5Hq2Lm8Xv0Rt3Ws9Ka1Yp7Dn4',
    kind: 'card',
    mode: type === 'order.authorized' || type === 'order.voided' ? 'auth' : 'sale',
    payment_method: null,
    saved_card_id: null,
    gateway_transaction_id: 'txn_8f2c41d0',
    payment_session_id: null,
    action_url: null,
    capture_before: new Date('2026-03-09T09:30:00.000Z'),
  };
  const uncaptured = { captured_minor: null };
  const as: Record<OrderEventType, Partial<ViewedOrder>> = {
    'order.authorized': { status: 'authorized', ...uncaptured },
    'order.paid': {},
    'order.partially_refunded': { status: 'partially_refunded', refunded_minor: 200 },
    'order.refunded': { status: 'refunded', refunded_minor: 1234 },
    'order.voided': { status: 'voided', ...uncaptured },
    'order.failed': { status: 'failed', failure_code: 'ERR_CARD_DO_NOT_HONOR', ...uncaptured },
    'order.cancelled': { status: 'cancelled', ...uncaptured },
    'order.expired': { status: 'expired', ...uncaptured },
    'order.disputed': { status: 'disputed', disputed_minor: 1234 },
    'order.dispute_won': {},
    'order.needs_review': { needs_review: true, review_reason: "captured 1500 exceeds the order's 1234" },
    'order.closed': { status: 'closed', closed_reason: 'cancelled', closed_at: at, ...uncaptured },
  };
  // As sent: JSON, its dates written as text.
  return JSON.parse(JSON.stringify(orderEventPayload(type, at, { ...order, ...as[type] }, attempt)));
}

const signatureHeaders = z.object({
  'webhook-id': z.string().meta({
    description:
      'The event id (`oev_...`): the same on every try and on a replay. Deduplicate by it: an event may come more than once.',
  }),
  'webhook-timestamp': z.string().regex(/^\d+$/).meta({
    description:
      "When this try was sent, in Unix seconds (the kit's wall clock). Refuse one too far from your own clock: Standard Webhooks libraries allow 5 minutes either way.",
  }),
  'webhook-signature': z.string().meta({
    description:
      '`v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed by `SHOP_WEBHOOK_SECRET` (`whsec_<base64 key>`): verify over the raw bytes, before parsing them, with any Standard Webhooks library.',
  }),
});

const responses = {
  '2XX': { description: 'Delivered: any 2xx. The body of the answer is not read.' },
  default: {
    description: `Not delivered: any other status (a redirect is not followed), or no answer within ${SEND_TIMEOUT_MS / 1000} s. Tried again after 5 s, 30 s, 2, 5, 15 and 30 minutes, then hourly, and given up three days after the event (\`order-events replay\` sends it again). The order's next event waits for this one.`,
  },
};

/** One webhook a type, each named by it: what the shop's endpoint is sent, and what it answers. */
export const orderEventWebhooks: ApiWebhook[] = ORDER_EVENT_TYPES.map((type, i) => ({
  name: type,
  operation: {
    operationId: `${schemaId(type)[0]!.toLowerCase()}${schemaId(type).slice(1)}`,
    summary: SUMMARY[type],
    description: `${WHEN[type]}\n\nPOSTed to each URL of \`SHOP_WEBHOOK_URLS\` (\`User-Agent: merchant-kit-order-events\`), signed as the Standard Webhooks specification says; an order's events reach each endpoint in the order they happened.`,
    // The kit presents no credential: the signature headers prove the body is the kit's.
    security: [],
    requestParams: { header: signatureHeaders },
    body: { description: `The \`${type}\` event.`, schema: EVENT_SCHEMAS[i]!, example: example(type) },
    responses,
  },
}));
