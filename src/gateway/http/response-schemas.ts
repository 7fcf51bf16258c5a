import { z } from 'zod';
import { enumOf } from '../../shared/api-document.js';
import type { CardBrand } from '../domain/cards.js';
import type { InstrumentStatus } from '../domain/instruments.js';
import type { SessionStatus } from '../domain/sessions.js';
import type { VerificationStatus } from '../domain/three-ds.js';
import type { TransactionStatus, TransactionType } from '../domain/transactions.js';
import {
  type DeliveryErrorReason,
  type DeliveryStatus,
  EVENT_TYPES,
  type EventStatus,
} from '../domain/webhooks.js';

/**
 * What the sandbox answers, as zod schemas (gateway-api.md, Resources): the source of the responses
 * in its OpenAPI document (api-document.ts). They describe the domain's views (transactionView,
 * sessionView, ...); a test checks real answers of a running sandbox against the document.
 */

const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC with microseconds.' });
const minor = z.number().int().meta({ description: 'Minor units.' });
const id = z.number().int();

const vaultToken = z.string().meta({ description: '`vt_...`' });

export const transactionSchema = z
  .object({
    id,
    related_trans_id: id
      .nullable()
      .meta({ description: 'The transaction a capture, refund or void acts on.' }),
    merchant_id: id,
    cardholder_id: id,
    amount: minor,
    amount_formatted: z.string(),
    currency: z.string(),
    status: enumOf<TransactionStatus>({
      pending: true,
      auth: true,
      captured: true,
      refunded: true,
      voided: true,
      failed: true,
      cancelled: true,
      chargeback: true,
    }),
    status_reason: z.string().nullable(),
    transaction_type: enumOf<TransactionType>({
      sale: true,
      auth: true,
      capture: true,
      refund: true,
      void: true,
    }),
    merchant_trans_id: z.string().meta({ description: "The merchant's reference." }),
    description: z.string().nullable(),
    refunded_amount: minor,
    chargeback_amount: minor.meta({
      description:
        'What a chargeback took back; 0 when none (sandbox.md section 11: a gateway without it omits it).',
    }),
    acquirer_trans_id: z.string(),
    acquirer_auth_code: z.string(),
    acquirer_ref_num: z.string(),
    ip_address: z.string(),
    capture_before: timestamp.nullable().meta({
      description:
        'An auth: when it lapses if neither captured nor voided (kept for its life). null on every other record (sandbox.md section 11: a gateway without it omits it).',
    }),
    vault_token: vaultToken.nullable().meta({
      description:
        'A sale or auth that saved its card (`save_payment_instrument`), or was paid with a vault token: that payment instrument. null on every other record (sandbox.md section 11: a gateway without it omits it).',
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Transaction' });

const sqlDateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .meta({ description: '`YYYY-MM-DD HH:MM:SS`, UTC.' });

export const verificationSchema = z
  .object({
    id: id.meta({ description: 'Deprecated: use `public_id`.', deprecated: true }),
    public_id: z.string().meta({ description: '`tds_...`: send it as `card_verification_data.id`.' }),
    amount: minor,
    currency: z.string(),
    version: z.string(),
    eci: z.string(),
    cavv: z.string(),
    xid: z.null(),
    ds_trans_id: z.string(),
    status: enumOf<VerificationStatus>({ pending: true, full_auth: true, failed: true }),
    auth_type: z.enum(['frictionless', 'challenge']),
    challenge_url: z.url().nullable().meta({ description: 'The challenge page, when one is needed.' }),
    post_url: z.null(),
    html: z.null(),
    created_at: sqlDateTime,
    updated_at: sqlDateTime,
  })
  .meta({ id: 'CardVerification' });

export const paymentSessionSchema = z
  .object({
    payment_session_id: z.string(),
    transaction_id: id,
    merchant_id: id,
    merchant_reference: z.string(),
    provider: z.string(),
    payment_method: z.string(),
    status: enumOf<SessionStatus>({
      created: true,
      pending_redirect: true,
      pending_provider: true,
      paid: true,
      failed: true,
      cancelled: true,
      chargeback: true,
      expired: true,
    }),
    status_reason: z.string().nullable(),
    amount: minor,
    amount_formatted: z.string(),
    currency: z.string(),
    checkout_url: z.url(),
    return_url: z.url(),
    cancel_url: z.url(),
    provider_session_id: z.string(),
    provider_transaction_id: z.string().nullable(),
    customer_reference: z.string(),
    expires_at: timestamp,
    finalised_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PaymentSession' });

export const sessionAnswerSchema = z.object({ payment_session: paymentSessionSchema });

export const paymentMethodsSchema = z
  .object({
    merchant_id: id,
    country: z.string().nullable(),
    currency: z.string().nullable(),
    payment_methods: z.array(
      z.object({
        payment_method: z.string(),
        label: z.string(),
        provider: z.string(),
        available: z.boolean(),
        unavailable_reasons: z.array(
          z.enum(['country_not_supported', 'currency_not_supported', 'provider_not_offering']),
        ),
        supported_countries: z.array(z.string()),
        supported_currencies: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: 'PaymentMethods' });

const deliveryStatus = enumOf<DeliveryStatus>({ healthy: true, degraded: true, failing: true, paused: true });

export const endpointSchema = z
  .object({
    id,
    merchant_id: id,
    url: z.string(),
    is_active: z.boolean(),
    events: z.array(z.enum(EVENT_TYPES)).nullable().meta({ description: 'null: the default set.' }),
    has_secret: z.literal(true),
    last_success_at: timestamp.nullable(),
    last_failure_at: timestamp.nullable(),
    consecutive_failures: z.number().int(),
    delivery_status: deliveryStatus,
    status_message: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });

export const endpointWithSecretSchema = z
  .object({
    endpoint: endpointSchema,
    secret: z.string().meta({ description: 'The signing secret: shown this once.' }),
  })
  .meta({ id: 'WebhookEndpointWithSecret' });

const errorReason = enumOf<DeliveryErrorReason>({
  timeout: true,
  connection_refused: true,
  dns_error: true,
  tls_error: true,
  http_status: true,
  endpoint_deleted: true,
});

export const pingSchema = z
  .object({
    success: z.boolean().meta({ description: 'Whether the receiver answered 2xx.' }),
    status_code: z.number().int().nullable(),
    duration_ms: z.number().int(),
    error: errorReason.nullable(),
    delivery_status: deliveryStatus,
  })
  .meta({ id: 'WebhookPing' });

const attemptSchema = z
  .object({
    delivery_id: z.string(),
    attempt: z.number().int(),
    status_code: z.number().int().nullable(),
    error_reason: errorReason.nullable(),
    response_excerpt: z.string().nullable(),
    duration_ms: z.number().int(),
    is_replay: z.boolean(),
    created_at: timestamp,
  })
  .meta({ id: 'DeliveryAttempt' });

const eventFields = {
  id: z.string().meta({ description: '`evt_...`' }),
  event_type: z.enum(EVENT_TYPES),
  transaction_id: id,
  merchant_trans_id: z.string(),
  status: enumOf<EventStatus>({ pending: true, delivered: true, failed: true }),
  attempts: z.number().int(),
  created_at: timestamp,
  delivered_at: timestamp.nullable(),
  failed_at: timestamp.nullable(),
};

export const eventRowSchema = z
  .object({ ...eventFields, last_attempt: attemptSchema.nullable() })
  .meta({ id: 'WebhookEventRow', description: 'A list row: never the payload.' });

/** sandbox.md section 8: the payload exactly as signed and sent. */
export const eventPayloadSchema = z
  .object({
    id: z.string(),
    type: z.enum(EVENT_TYPES),
    created_at: timestamp,
    api_version: z.string(),
    data: z.object({
      transaction: z.object({
        id,
        merchant_trans_id: z.string(),
        related_trans_id: id.nullable(),
        transaction_type: transactionSchema.shape.transaction_type,
        status: transactionSchema.shape.status,
        amount: minor,
        currency: z.string(),
        acquirer_provider: z.string(),
        acquirer_trans_id: z.string(),
        acquirer_auth_code: z.string(),
        description: z.string().nullable(),
        created_at: timestamp,
        updated_at: timestamp,
        refunded_amount: minor,
        chargeback_amount: minor,
        capture_before: timestamp.nullable().meta({
          description: 'An auth: when it lapses; null on every other record (sandbox.md section 11).',
        }),
        vault_token: vaultToken.nullable().meta({
          description:
            'The payment instrument a sale or auth saved or was paid with; null on every other record (sandbox.md section 11).',
        }),
      }),
    }),
  })
  .meta({ id: 'WebhookEventPayload' });

export const eventDetailSchema = z
  .object({ ...eventFields, payload: eventPayloadSchema, delivery_attempts: z.array(attemptSchema) })
  .meta({ id: 'WebhookEvent' });

/** Every list's page (http/pagination.ts). */
const paginationSchema = z
  .object({
    current_page: z.number().int(),
    last_page: z.number().int(),
    per_page: z.number().int(),
    total: z.number().int(),
  })
  .meta({ id: 'Pagination' });

export const eventListSchema = z.object({
  events: z.array(eventRowSchema),
  pagination: paginationSchema,
});

/** sandbox.md section 11: a card on file. Never the card number, its CVV or anything derived from them but `last4`. */
export const instrumentSchema = z
  .object({
    vault_token: vaultToken.meta({ description: '`vt_...`: send it as `vault_token` to pay with the card.' }),
    merchant_id: id,
    merchant_customer_id: z.string(),
    brand: enumOf<CardBrand>({ visa: true, mastercard: true, amex: true, other: true }),
    last4: z.string().regex(/^\d{4}$/),
    exp_month: z.number().int().min(1).max(12),
    exp_year: z.number().int(),
    name: z.string().nullable().meta({ description: "The card's `name`, null when none was sent." }),
    status: enumOf<InstrumentStatus>({ active: true, revoked: true }),
    created_at: timestamp,
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: 'PaymentInstrument' });

export const instrumentListSchema = z.object({
  payment_instruments: z.array(instrumentSchema).meta({ description: 'Active ones, newest first.' }),
  pagination: paginationSchema,
});

export const tickReportSchema = z
  .object({
    attempted: z.number().int(),
    delivered: z.number().int(),
    failed: z.number().int(),
    now: timestamp,
    challenges_expired: z.number().int(),
    sessions_expired: z.number().int(),
    auths_lapsed: z.number().int(),
    events_pruned: z.number().int(),
  })
  .meta({ id: 'TickReport' });

/** gateway-api.md, Response envelope: a success. */
export function success<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), message: z.string(), code: z.literal(''), data });
}

/** gateway-api.md, Response envelope: an error, `code` one of `codes`, `data` what it carries. */
export function failure(codes: readonly string[], data: z.ZodType = z.null()) {
  return z.object({
    success: z.literal(false),
    message: z.string(),
    code: z.enum(codes as [string, ...string[]]),
    data,
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .meta({ description: 'Only on validation failures: field -> messages.' }),
  });
}

/**
 * ERR_DUPLICATE's `data`: the transaction that holds the reference and, when that transaction is a
 * payment session's, the session (sandbox.md section 11: additive, so a real gateway may omit it).
 */
export const duplicateSchema = z.object({
  transaction_id: id,
  payment_session_id: z.string().optional().meta({
    description:
      "`ps_...`: present when the holder is a payment session's transaction, to resume that session. A gateway without it omits it.",
  }),
});

const keyFields = {
  scopes: z.array(z.string()),
  rate_limit: z
    .object({ limit: z.number().int(), window_s: z.number().int() })
    .meta({ description: 'How many requests the key may make in each window of `window_s` seconds.' }),
};

/** sandbox.md section 11, Key information: never the key text nor a secret. */
export const apiKeySchema = z
  .discriminatedUnion('key_type', [
    z.object({ key_type: z.literal('merchant'), merchant_id: id, ...keyFields }),
    z.object({
      key_type: z.literal('partner'),
      linked_merchant_ids: z.array(id).meta({ description: 'The merchants the key may act for.' }),
      ...keyFields,
    }),
  ])
  .meta({ id: 'ApiKey' });
