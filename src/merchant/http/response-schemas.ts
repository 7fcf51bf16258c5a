import { z } from 'zod';
import { customerSchema } from '../../shared/customer.js';
import { OPERATOR_ROLES } from '../operators/roles.js';
import { DISPUTE_OUTCOMES } from '../orders/disputes.js';
import { CLOSE_REASONS, ORDER_STATUSES } from '../orders/status.js';

/**
 * What the merchant API answers, as zod schemas: the source of the responses in its OpenAPI document
 * (api-document.ts). They describe views.ts and errors.ts, which build the answers; a test sends real
 * requests to a running kit and checks every answer against the document, so the two cannot drift apart.
 */

/** The values every answer's schemas share (finance-schemas.ts too). */
export const timestamp = z.iso.datetime();
export const minor = z.number().int().meta({ description: 'Minor units (cents): 1234 is 12.34 EUR.' });
export const formatted = z.string().meta({ description: 'The amount in major units, as text: `12.34`.' });
export const orderStatus = z.enum(ORDER_STATUSES);

export const paymentSchema = z
  .object({
    attempt_id: z.string(),
    kind: z.enum(['card', 'redirect']),
    mode: z.enum(['sale', 'auth']).nullable(),
    payment_method: z.string().nullable(),
    saved_card_id: z
      .string()
      .nullable()
      .meta({ description: 'The saved card it pays with (`card_...`), or null.' }),
    gateway_transaction_id: z.string().nullable(),
    payment_session_id: z.string().nullable(),
  })
  .meta({ id: 'Payment', description: "The order's current payment attempt." });

/** An order's `customer` once erased (issue 43): the person's fields are gone, and when they went. */
export const erasedCustomerSchema = z
  .object({
    erased: z.literal(true),
    erased_at: timestamp.meta({ description: "When the customer's personal data was erased." }),
  })
  .meta({
    id: 'ErasedCustomer',
    description:
      "The order's customer was erased (POST /customers/{id}/erase): names, email, phone, address, IP address and the shop's id for them are gone; the money is as it was.",
  });

export const orderSchema = z
  .object({
    id: z.string().meta({ examples: ['ord_1W3k9Qm2Zx8Yv4Ta7Lp0Rs5N'] }),
    merchant_id: z
      .number()
      .int()
      .nullable()
      .meta({
        description:
          "The gateway merchant the order is for (platform mode: one of `GATEWAY_MERCHANTS`); null: the gateway key's own account, its id not known.",
        examples: [1001],
      }),
    reference: z.string().meta({ description: 'Sent to the gateway as the payment reference.' }),
    status: orderStatus,
    amount: minor,
    amount_formatted: formatted,
    currency: z.string(),
    description: z.string().nullable(),
    customer: z.union([customerSchema, erasedCustomerSchema]).nullable(),
    captured_amount: minor.nullable(),
    captured_amount_formatted: formatted.nullable(),
    refunded_amount: minor.meta({ description: "The gateway's running refunded total, in minor units." }),
    refunded_amount_formatted: formatted,
    disputed_amount: minor.meta({
      description:
        'What a chargeback took back while the order is disputed; 0 otherwise (a dispute won gives it back).',
    }),
    disputed_amount_formatted: formatted,
    failure_code: z.string().nullable().meta({ description: 'Why the last attempt failed: a gateway code.' }),
    needs_review: z
      .boolean()
      .meta({ description: 'Set when money does not add up (another amount, a second capture).' }),
    review_reason: z.string().nullable(),
    closed_reason: z.enum(CLOSE_REASONS).nullable().meta({
      description:
        'Why the order ended, once it did: `cancelled` (`POST /orders/{id}/cancel`) or `expired` (`ORDER_TTL`). A closed order takes no payment. Kept when money reaches it after all (a payment finished at the last second): the status then says the money, and the order is flagged for review.',
    }),
    closed_at: timestamp.nullable().meta({ description: 'When the order ended; null while it is open.' }),
    capture_before: z.string().nullable().meta({
      description:
        'An authorized order: when its authorisation lapses unless captured or voided (the gateway says; null when it does not, and in every other status).',
    }),
    payment: paymentSchema.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Order' });

export const disputeOutcome = z.enum(DISPUTE_OUTCOMES);

/** A dispute record (src/merchant/http/views.ts, disputeView; issue 19). */
export const disputeSchema = z
  .object({
    id: z.string().meta({ examples: ['dsp_4Hc8Qz1Lw7Rt2Yp9Nk3Vb6Xs'] }),
    order_id: z.string(),
    gateway_transaction_id: z.string().nullable(),
    amount: minor.meta({ description: 'What the chargeback took back.' }),
    amount_formatted: formatted,
    currency: z.string(),
    outcome: disputeOutcome.meta({
      description:
        '`open`; `won` when the gateway reversed the chargeback (the order is paid again); `lost` when an operator said so (the order stays disputed).',
    }),
    opened_at: timestamp,
    closed_at: timestamp.nullable(),
    closed_by: z
      .string()
      .nullable()
      .meta({ description: '`gateway` for a reversal; the operator for a loss.' }),
    note: z.string().nullable(),
  })
  .meta({ id: 'Dispute', description: "A chargeback of an order's payment, and how it ended." });

export const historyEntrySchema = z
  .object({
    source: z.string().meta({ description: '`webhook`, `replay`, `poll`, `api` or `recovery`.' }),
    source_id: z.string().meta({ description: "The source's own id: an event id, a request id." }),
    status_before: z.string(),
    status_after: z.string(),
    outcome: z.string().meta({
      description:
        "`applied`, `duplicate`, `stale` or `flagged` (an observation); `requested` (an operator's capture, refund or void, stored before the gateway is called: who asked and why); `refused` (one the gateway turned down: the order unchanged); `resolved` (a person resolved the order's review: who, the resolution, the note, what was cleared).",
    }),
    detail: z.string().nullable(),
    at: timestamp,
  })
  .meta({
    id: 'HistoryEntry',
    description: "One observation of the gateway, applied or not, or a person's act on the order.",
  });

/** What POST /orders answers: the order, and its client secret (issue 41), answered this once. */
export const createdOrderSchema = orderSchema
  .extend({
    client_secret: z.string().meta({
      description:
        "The order's client secret (`ocs_...`): answered here once, never by a read. The shopper-facing routes of this order (its pay routes, `GET /orders/{id}` without a token) need it, in the `Order-Secret` header (or `client_secret` in a pay route's body). Keep it with the checkout, hand it to the shopper's browser, never log it; the kit keeps only its hash.",
      examples: ['ocs_Gz8yX1vW3n4Q9pLk2sD7fB5hJ0mT6rEcA-_uYiOqZxw'],
    }),
  })
  .meta({
    id: 'CreatedOrder',
    description: 'The order as operators see it, and its client secret: what `POST /orders` answers.',
  });

/** What `POST /orders` answers again for an Idempotency-Key (issue 43, part 1). */
export const replayedOrderSchema = orderSchema
  .extend({
    client_secret: z.string().meta({
      description:
        "The order's client secret, as the first answer gave it: kept sealed beside the key for its 24 hours.",
      examples: ['ocs_Gz8yX1vW3n4Q9pLk2sD7fB5hJ0mT6rEcA-_uYiOqZxw'],
    }),
  })
  .meta({
    id: 'ReplayedOrder',
    description:
      'The order an earlier request with the same `Idempotency-Key` and body made, as it now stands, and its client secret.',
  });

/** A 409 that names an order: the one holding a reference, or the one an Idempotency-Key made. */
export const namedOrderSchema = z
  .object({ order_id: z.string().meta({ description: 'The order (`ord_...`).' }) })
  .meta({ id: 'NamedOrder', description: 'The order the refusal is about.' });

export const orderWithHistorySchema = orderSchema
  .extend({
    history: z.array(historyEntrySchema),
    disputes: z
      .array(disputeSchema)
      .meta({ description: "The chargebacks of the order's payments, newest first." }),
  })
  .meta({ id: 'OrderWithHistory' });

export const nextActionSchema = z
  .object({ type: z.literal('redirect'), url: z.url() })
  .nullable()
  .meta({
    id: 'NextAction',
    description:
      'Where to send the customer: the 3DS challenge or the hosted checkout page; null when nothing is left to do.',
  });

/** orders/order-view.ts, publicOrderView: what the holder of an order's client secret reads. */
export const publicOrderSchema = orderSchema
  .pick({
    id: true,
    reference: true,
    status: true,
    closed_reason: true,
    amount: true,
    amount_formatted: true,
    currency: true,
    captured_amount: true,
    captured_amount_formatted: true,
    refunded_amount: true,
    refunded_amount_formatted: true,
    disputed_amount: true,
    disputed_amount_formatted: true,
    updated_at: true,
  })
  .extend({ next_action: nextActionSchema })
  .meta({
    id: 'PublicOrder',
    description:
      "An order as its shopper sees it (its client secret, no token): its status, its amounts and, while it is `requires_action`, `next_action`: the page to send the shopper to (the 3DS challenge, the hosted checkout). The customer, the description, why a payment failed, the review, the payment's ids, the history and the disputes are for operators (`OrderWithHistory`).",
  });

export const paymentAnswerSchema = z
  .object({ order: orderSchema, next_action: nextActionSchema })
  .meta({ id: 'PaymentAnswer', description: "An operator's charge: the order as operators see it." });

export const publicPaymentAnswerSchema = z
  .object({ order: publicOrderSchema, next_action: nextActionSchema })
  .meta({
    id: 'PublicPaymentAnswer',
    description:
      "A storefront's payment (whoever holds the order's client secret may send one): the order's public view, and where to send the shopper.",
  });

export const operationSchema = z
  .object({
    id: z.string(),
    operation: z.enum(['capture', 'refund', 'void']),
    status: z.enum(['pending', 'succeeded', 'failed']),
    amount: minor,
    gateway_transaction_id: z.string().nullable(),
  })
  .meta({
    id: 'Operation',
    description: "An operator's capture, refund or void, as recorded before the call.",
  });

export const operationAnswerSchema = z
  .object({ order: orderSchema, operation: operationSchema })
  .meta({ id: 'OperationAnswer' });

/** What the kit's gateway client keeps of the gateway's list (src/client/schemas.ts): ids as strings. */
export const paymentMethodsSchema = z
  .object({
    merchant_id: z.string().optional(),
    country: z.string().nullable().optional(),
    currency: z.string().nullable().optional(),
    payment_methods: z.array(
      z.object({
        payment_method: z.string(),
        label: z.string(),
        provider: z.string().optional(),
        available: z.boolean(),
        unavailable_reasons: z.array(z.string()),
        supported_countries: z.array(z.string()),
        supported_currencies: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: 'PaymentMethods' });

export const invalidStateSchema = z.object({ status: orderStatus, allowed: z.array(orderStatus) }).meta({
  id: 'InvalidState',
  description: "The order's status and the statuses the action is allowed from.",
});

export const paymentInvalidStateSchema = invalidStateSchema.extend({ order: publicOrderSchema }).meta({
  id: 'PaymentInvalidState',
  description:
    "A payment of an order past paying for: the order's status, the statuses a payment may start from, and the order's public view as it stands (a second press of Pay finds the first one's payment).",
});

export const orderClosedStateSchema = paymentInvalidStateSchema
  .extend({ closed_reason: z.enum(CLOSE_REASONS).nullable() })
  .meta({
    id: 'OrderClosedState',
    description:
      "A payment of an order that ended (`ORDER_CLOSED`): why it ended (`cancelled`, `expired`), and the order's public view. It takes no payment again: a new order does.",
  });

/** The envelope of a success (merchant.md, HTTP interface: the gateway's shape). */
export function success<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), message: z.string(), code: z.literal(''), data });
}

export const fieldErrorsSchema = z
  .record(z.string(), z.array(z.string()))
  .meta({ id: 'FieldErrors', description: 'Field (dotted path) -> what is wrong with it.' });

/**
 * The envelope of an error: `code` one of `codes` (any string when the gateway's code passes
 * through), `data` what the error carries.
 */
export function failure(codes: readonly string[] | 'gateway', data: z.ZodType = z.null()) {
  return z.object({
    success: z.literal(false),
    message: z.string(),
    code: codes === 'gateway' ? z.string() : z.enum(codes as [string, ...string[]]),
    data,
    errors: fieldErrorsSchema.optional(),
    request_id: z
      .string()
      .nullable()
      .optional()
      .meta({ description: 'The X-Request-Id of the request: what an operator searches the logs for.' }),
  });
}

/** GET /orders: a page of the operators' list, newest first (the review queue with needs_review=true). */
export const orderListSchema = z
  .object({
    orders: z.array(orderSchema),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'OrderList' });

/** A 403: the token is good, its role is not enough. */
export const forbiddenSchema = z
  .object({
    role: z.enum(['admin', ...OPERATOR_ROLES]).meta({ description: "The token's role." }),
    allowed: z
      .array(z.enum(['admin', ...OPERATOR_ROLES]))
      .optional()
      .meta({ description: 'The roles that may do this (when the role is what is wanting).' }),
    merchant_ids: z.array(z.number().int()).optional().meta({
      description:
        'The merchants the token is scoped to (platform mode), when that is what is wanting: the route reads across every merchant, or names another merchant.',
    }),
  })
  .meta({ id: 'Forbidden' });

/** What an erasure did (issue 43; src/merchant/http/saved-cards.ts, erasureView). */
export const erasureSchema = z
  .object({
    customer: z.object({
      reference: z.string().meta({
        description:
          'How the records name the erased customer: `cer_` and a keyed digest of their id (the id itself is kept nowhere). The same id gives the same reference.',
        examples: ['cer_9f86d081884c7d659a2feaa0c55ad015'],
      }),
      erased_at: timestamp,
    }),
    orders: z.number().int().meta({ description: 'Orders whose customer was erased now.' }),
    saved_cards: z.object({
      revoked_at_gateway: z.number().int(),
      removed: z.number().int().meta({ description: "The kit's rows of their saved cards, deleted." }),
    }),
    webhook_events: z.number().int().meta({
      description: 'Kept gateway payloads that held something of the customer, rewritten without it.',
    }),
    order_events: z
      .number()
      .int()
      .meta({ description: "Order events in the outbox whose body lost the order's customer." }),
    held_payments: z.number().int().meta({
      description:
        "Card payments across an open 3DS challenge: the card still pays, the customer's details it held are gone.",
    }),
    audit_lines: z
      .number()
      .int()
      .meta({ description: "Audit lines that named the customer's id, now naming their reference." }),
  })
  .meta({ id: 'Erasure' });

/** A customer's saved card (issue 21): what the gateway keeps of it, never a number or a vault token. */
export const savedCardSchema = z
  .object({
    id: z
      .string()
      .meta({ description: "The kit's id for the card (`card_...`): what the storefront pays with." }),
    customer_id: z
      .string()
      .meta({ description: "The shop's own id for the customer (`merchant_customer_id`)." }),
    brand: z.string().meta({ description: '`visa`, `mastercard`, `amex` or `other`.' }),
    last4: z.string(),
    exp_month: z.number().int(),
    exp_year: z.number().int(),
    expired: z.boolean().meta({ description: 'Past its expiry month by now: it can no longer pay.' }),
    status: z.enum(['active', 'revoked']),
    created_at: timestamp,
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: 'SavedCard' });

export const customerTokenSchema = z
  .object({
    customer_id: z.string(),
    customer_token: z
      .string()
      .meta({ description: "Sent by the customer's browser as the `Customer-Token` header." }),
    expires_at: timestamp,
    order_id: z.string().nullable().meta({
      description: 'The order it pays with a saved card; null: it lists and removes cards, and pays nothing.',
    }),
  })
  .meta({ id: 'CustomerToken' });

/** A payment link (issue 43, part 3; src/merchant/http/payment-link-routes.ts, linkView). */
export const paymentLinkSchema = z
  .object({
    id: z.string().meta({
      description: 'The link as the records name it (`plk_...`): its history and audit lines.',
      examples: ['plk_7Tq2Lm9Xc4Vb1Nz8Rk3Wd6Ys'],
    }),
    url: z.url().meta({
      description:
        "What the shopper opens: `PUBLIC_BASE_URL/pay/<token>`. Shown this once: the kit keeps only the token's SHA-256.",
    }),
    order_id: z.string(),
    payment_method: z.string().meta({ description: 'The hosted checkout a visit opens.' }),
    expires_at: timestamp.meta({
      description: 'Until then the link opens, and the order does not end by `ORDER_TTL`.',
    }),
    created_at: timestamp,
    created_by: z.string().meta({ description: 'Who made it: `name (role)`.' }),
  })
  .meta({ id: 'PaymentLink' });
