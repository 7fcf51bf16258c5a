import { z } from 'zod';

/** gateway-api.md, Versioning: identifiers are opaque strings, whatever JSON type they arrive as. */
const id = z.union([z.string().min(1), z.number()]).transform(String);
const nullableId = z
  .union([z.string(), z.number()])
  .nullable()
  .optional()
  .transform((v) => (v == null ? null : String(v)));
const minor = z.number().int();

/** Response envelope (gateway-api.md): every answer, errors included. */
export const envelopeSchema = z.object({
  success: z.boolean(),
  message: z.string().default(''),
  code: z.string().default(''),
  data: z.unknown().optional(),
  errors: z.record(z.string(), z.array(z.string())).optional(),
});

export const transactionSchema = z.object({
  id,
  related_trans_id: nullableId,
  merchant_id: id.optional(),
  amount: minor,
  currency: z.string(),
  status: z.string(),
  transaction_type: z.string(),
  merchant_trans_id: z.string().nullable().optional(),
  refunded_amount: minor.optional().default(0),
  /** sandbox.md section 11, additive: a gateway without it omits it. */
  chargeback_amount: minor.optional(),
  /** An auth's deadline for capture or void (sandbox.md section 11, additive: may be absent). */
  capture_before: z.string().nullable().optional(),
  /** The instrument a saving payment made (sandbox.md section 11, additive: absent when none). */
  vault_token: z.string().nullable().optional(),
  status_reason: z.string().nullable().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
});
export type GatewayTransaction = z.output<typeof transactionSchema>;

/** The record may come back in `data` or under `data.transaction` (gateway-api.md, Transactions). */
export const transactionData = z.union([
  transactionSchema,
  z.object({ transaction: transactionSchema }).transform((d) => d.transaction),
]);

export const verificationSchema = z.object({
  id: nullableId,
  public_id: z.string(),
  amount: minor,
  currency: z.string(),
  status: z.string(),
  auth_type: z.string().nullable().optional(),
  eci: z.string().nullable().optional(),
  challenge_url: z.string().nullable().optional(),
});
export type GatewayVerification = z.output<typeof verificationSchema>;

export const paymentSessionSchema = z.object({
  payment_session_id: z.string(),
  transaction_id: id,
  merchant_reference: z.string().optional(),
  payment_method: z.string(),
  status: z.string(),
  amount: minor,
  currency: z.string(),
  checkout_url: z.string(),
  expires_at: z.string().optional(),
  finalised_at: z.string().nullable().optional(),
});
export type GatewayPaymentSession = z.output<typeof paymentSessionSchema>;
export const paymentSessionData = z
  .object({ payment_session: paymentSessionSchema })
  .transform((d) => d.payment_session);

export const paymentMethodsSchema = z.object({
  merchant_id: id.optional(),
  country: z.string().nullable().optional(),
  currency: z.string().nullable().optional(),
  payment_methods: z.array(
    z.object({
      payment_method: z.string(),
      label: z.string(),
      provider: z.string().optional(),
      available: z.boolean(),
      unavailable_reasons: z.array(z.string()).default([]),
      supported_countries: z.array(z.string()).default([]),
      supported_currencies: z.array(z.string()).default([]),
    }),
  ),
});
export type GatewayPaymentMethods = z.output<typeof paymentMethodsSchema>;

export const endpointSchema = z.object({
  id,
  url: z.string().nullable().optional(),
  is_active: z.boolean(),
  events: z.array(z.string()).nullable(),
  last_success_at: z.string().nullable().optional(),
  last_failure_at: z.string().nullable().optional(),
  consecutive_failures: z.number().int().default(0),
  delivery_status: z.string().optional(),
  status_message: z.string().optional(),
});
export type GatewayEndpoint = z.output<typeof endpointSchema>;
export const endpointWithSecret = z.object({ endpoint: endpointSchema, secret: z.string() });
/** PUT answers `{endpoint, secret}` on creation and the bare record on update. */
export const putEndpointData = z.union([
  endpointWithSecret,
  endpointSchema.transform((endpoint) => ({ endpoint, secret: null as string | null })),
]);

export const pingSchema = z.object({
  success: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().optional(),
  error: z.string().nullable().optional(),
  delivery_status: z.string().optional(),
});

const attemptSchema = z.object({
  delivery_id: z.string(),
  attempt: z.number().int(),
  status_code: z.number().int().nullable(),
  error_reason: z.string().nullable(),
  is_replay: z.boolean().optional(),
  created_at: z.string(),
});

export const eventRowSchema = z.object({
  id: z.string(),
  event_type: z.string(),
  transaction_id: id.nullable().optional(),
  merchant_trans_id: z.string().nullable().optional(),
  status: z.string(),
  attempts: z.number().int().default(0),
  created_at: z.string(),
  last_attempt: attemptSchema.nullable().optional(),
});
export type GatewayEventRow = z.output<typeof eventRowSchema>;

export const paginationSchema = z.object({
  current_page: z.number().int(),
  last_page: z.number().int(),
  per_page: z.number().int(),
  total: z.number().int(),
});

/** A payment instrument (sandbox.md section 11): what a saved card is at the gateway. No card number. */
export const paymentInstrumentSchema = z.object({
  vault_token: z.string().min(1),
  merchant_customer_id: z.string(),
  brand: z.string(),
  last4: z.string(),
  exp_month: z.coerce.number().int(),
  exp_year: z.coerce.number().int(),
  name: z.string().nullable().optional(),
  status: z.string(),
  created_at: z.string().optional(),
  revoked_at: z.string().nullable().optional(),
});
export type GatewayPaymentInstrument = z.output<typeof paymentInstrumentSchema>;

export const paymentInstrumentListSchema = z.object({
  payment_instruments: z.array(paymentInstrumentSchema),
  pagination: paginationSchema.optional(),
});

/** The revoked record may come back in `data` or under `data.payment_instrument`. */
export const paymentInstrumentData = z.union([
  paymentInstrumentSchema,
  z.object({ payment_instrument: paymentInstrumentSchema }).transform((d) => d.payment_instrument),
]);

export const eventListSchema = z.object({ events: z.array(eventRowSchema), pagination: paginationSchema });

/** The payload exactly as delivered: what the receiver and the recovery job both read. */
export const eventPayloadSchema = z.object({
  id: z.string(),
  type: z.string(),
  created_at: z.string(),
  api_version: z.string().optional(),
  data: z.object({ transaction: transactionSchema.optional() }).passthrough(),
});
export type GatewayEventPayload = z.output<typeof eventPayloadSchema>;

export const eventDetailSchema = eventRowSchema.extend({
  payload: eventPayloadSchema,
  delivery_attempts: z.array(attemptSchema).default([]),
});

export const replaySchema = z.object({ event: eventRowSchema });

/**
 * sandbox.md section 11, Key information: what the calling key is and may do. Fields beyond
 * `key_type` may be absent on another gateway (gateway-api.md, Versioning rule 2).
 */
export const apiKeyInfoSchema = z.object({
  key_type: z.enum(['merchant', 'partner']),
  merchant_id: z.number().int().optional(),
  linked_merchant_ids: z.array(z.number().int()).optional(),
  scopes: z.array(z.string()).optional(),
  rate_limit: z.object({ limit: z.number(), window_s: z.number() }).optional(),
});
export type GatewayKeyInfo = z.infer<typeof apiKeyInfoSchema>;
