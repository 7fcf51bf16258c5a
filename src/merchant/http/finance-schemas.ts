import { z } from 'zod';
import { REVIEW_RESOLUTIONS } from '../orders/review.js';
import { disputeOutcome, formatted, minor, orderStatus, timestamp } from './response-schemas.js';

/**
 * What finance reads, as zod schemas for the API document (api-document.ts): the reconciliation
 * report (beside it, gateway money with no order) and the audit export. Kept apart from
 * response-schemas.ts, whose values they share.
 */

/** One row of the reconciliation report (src/merchant/reports/reconciliation.ts, ReportRow). */
export const reportRowSchema = z
  .object({
    order_id: z.string(),
    reference: z.string(),
    created_at: timestamp,
    status: orderStatus,
    currency: z.string(),
    amount: minor,
    amount_formatted: formatted,
    captured_amount: minor.nullable(),
    captured_amount_formatted: formatted.nullable(),
    refunded_amount: minor,
    refunded_amount_formatted: formatted,
    disputed_amount: minor.meta({
      description: 'What a chargeback took back while the order is disputed (open or lost); 0 otherwise.',
    }),
    disputed_amount_formatted: formatted,
    dispute_outcome: disputeOutcome
      .nullable()
      .meta({ description: "The latest dispute of the order's payment; null when it had none." }),
    gateway_transaction_id: z.string().nullable(),
    gateway_status: z
      .string()
      .nullable()
      .meta({ description: "The gateway's last word on the transaction." }),
    gateway_currency: z.string().nullable(),
    gateway_amount: minor.nullable(),
    gateway_amount_formatted: formatted.nullable(),
    gateway_captured_amount: minor.nullable(),
    gateway_captured_amount_formatted: formatted.nullable(),
    gateway_refunded_amount: minor.nullable(),
    gateway_refunded_amount_formatted: formatted.nullable(),
    observed_at: timestamp.nullable(),
    observed_source: z.enum(['webhook', 'replay', 'poll', 'api', 'recovery']).nullable(),
    capture_before: z.string().nullable().meta({
      description:
        'An authorized order: when its authorisation lapses (reason `auth_expiring` within AUTH_EXPIRY_WARNING).',
    }),
    classification: z.enum(['matched', 'in_flight', 'mismatched', 'resolved']).meta({
      description:
        "`matched`: the order and the gateway agree. `in_flight`: only timing. `mismatched`: an open problem a person must look at. `resolved`: they still disagree, and a person resolved the order's review (`review` says how); until the order is flagged again.",
    }),
    reason: z.string(),
    match: z.boolean(),
    review: z
      .enum(['open', ...REVIEW_RESOLUTIONS])
      .nullable()
      .meta({
        description:
          "The order's review: `open` while it is flagged; else what a person last decided (POST /orders/{id}/review); null when it was never resolved.",
      }),
    reviewed_by: z
      .string()
      .nullable()
      .meta({ description: 'Who made the decision `review` names, as `name (role)`; null without one.' }),
    reviewed_at: timestamp.nullable(),
    merchant_id: z
      .number()
      .int()
      .nullable()
      .meta({
        description:
          "The gateway merchant whose order it is (platform mode); an order made before platform mode is the first of `GATEWAY_MERCHANTS`'s. Null: the kit does not know its key's own merchant id.",
        examples: [1001],
      }),
  })
  .meta({ id: 'ReportRow', description: 'An order beside what the gateway last said of its payment.' });

export const currencyTotalsSchema = z
  .object({
    currency: z.string(),
    orders: z.number().int(),
    captured: minor,
    captured_formatted: formatted,
    refunded: minor,
    refunded_formatted: formatted,
    disputed: minor.meta({
      description: 'What chargebacks took back, over the orders disputed now (a dispute won gives it back).',
    }),
    disputed_formatted: formatted,
    net: minor.meta({ description: 'Captured minus refunded minus disputed: what the shop keeps.' }),
    net_formatted: formatted,
    in_flight: z.number().int(),
    mismatched: z.number().int(),
    resolved: z
      .number()
      .int()
      .meta({ description: "Orders that disagree with the gateway by a person's decision." }),
  })
  .meta({ id: 'CurrencyTotals' });

/** One merchant's totals in one currency (reconciliation.ts, MerchantTotals). */
export const merchantTotalsSchema = z
  .object({
    merchant_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: "Whose orders: as the rows' `merchant_id`." }),
    ...currencyTotalsSchema.shape,
  })
  .meta({ id: 'MerchantTotals' });

/** Gateway money with no order (src/merchant/reports/unmatched.ts, UnmatchedMoneyRow; issue 19). */
export const unmatchedMoneySchema = z
  .object({
    id: z.string().meta({ examples: ['umn_4Hc8Qz1Lw7Rt2Yp9Nk3Vb6Xs'] }),
    transaction_id: z.string().meta({ description: "The gateway's transaction id." }),
    related_transaction_id: z
      .string()
      .nullable()
      .meta({ description: 'The payment a capture, refund or void belongs to; null for a sale or an auth.' }),
    reference: z
      .string()
      .nullable()
      .meta({ description: 'The merchant reference its record carries; null when it carries none.' }),
    transaction_type: z.string().meta({ description: '`sale`, `auth`, `capture`, `refund`, `void`, ...' }),
    status: z.string().meta({
      description:
        "What the gateway last said of it, by the gateway's own time (older news never replaces newer; a reversed chargeback is `captured` again).",
    }),
    currency: z.string(),
    amount: minor,
    amount_formatted: formatted.nullable(),
    captured_amount: minor.nullable().meta({
      description:
        'What a sale or capture took; null for an auth, a refund or void, or money not taken (failed, voided).',
    }),
    captured_amount_formatted: formatted.nullable(),
    refunded_amount: minor.meta({
      description: "The payment's running refunded total, as its records carry it.",
    }),
    refunded_amount_formatted: formatted.nullable(),
    disputed_amount: minor.meta({
      description:
        'What a chargeback took while the payment is charged back; 0 otherwise (a reversal gives it back).',
    }),
    disputed_amount_formatted: formatted.nullable(),
    order_id: z.string().nullable().meta({
      description:
        'The order whose reference it carries (flagged for review); once attached, the order it went to.',
    }),
    source: z
      .string()
      .meta({ description: 'What told the kit last: `webhook`, `replay`, `recovery`, `poll`, `api`.' }),
    source_id: z.string().meta({ description: "That source's id: the event id." }),
    first_seen_at: timestamp,
    last_seen_at: timestamp,
    seen_count: z.number().int().meta({ description: 'How many observations told of it.' }),
    resolution: z.enum(['open', 'attached', 'resolved']),
    resolved_note: z.string().nullable(),
    resolved_by: z.string().nullable(),
    resolved_at: timestamp.nullable(),
    merchant_id: z
      .number()
      .int()
      .nullable()
      .meta({
        description:
          "The gateway merchant whose webhook endpoint its event came to (platform mode); money kept before platform mode is the first of `GATEWAY_MERCHANTS`'s. Null: the kit does not know its key's own merchant id.",
        examples: [1001],
      }),
  })
  .meta({
    id: 'UnmatchedMoney',
    description: 'A gateway transaction naming money that no payment attempt of the kit holds.',
  });

export const unmatchedTotalsSchema = z
  .object({
    currency: z.string(),
    rows: z.number().int(),
    open: z.number().int(),
    attached: z.number().int(),
    resolved: z.number().int(),
    captured: minor.meta({ description: 'What sales and captures took, over the rows not attached.' }),
    captured_formatted: formatted,
    refunded: minor.meta({
      description: 'Per payment, its running refunded total; over the rows not attached.',
    }),
    refunded_formatted: formatted,
    disputed: minor.meta({
      description:
        'What chargebacks took back, of the payments charged back now; over the rows not attached.',
    }),
    disputed_formatted: formatted,
    net: minor.meta({ description: 'Captured minus refunded minus disputed.' }),
    net_formatted: formatted,
  })
  .meta({ id: 'UnmatchedTotals' });

/** One merchant's totals of money with no order in one currency (unmatched.ts, MerchantUnmatchedTotals). */
export const merchantUnmatchedTotalsSchema = z
  .object({
    merchant_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: "Whose money: as the rows' `merchant_id`." }),
    ...unmatchedTotalsSchema.shape,
  })
  .meta({ id: 'MerchantUnmatchedTotals' });

export const reportSchema = z
  .object({
    from: timestamp,
    to: timestamp,
    merchant_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The merchant the report is of (`merchant_id` asked); null: every merchant.' }),
    generated_at: timestamp,
    totals: z
      .array(currencyTotalsSchema)
      .meta({ description: 'Per currency, over every row (of every merchant, or of the one asked for).' }),
    totals_by_merchant: z.array(merchantTotalsSchema).meta({
      description:
        "Per merchant and currency, by merchant then currency: the same figures as `totals`, split by whose orders (platform mode). A kit of one merchant has that merchant's lines only.",
    }),
    rows: z.array(reportRowSchema),
    unmatched_money: z
      .object({
        rows: z.array(unmatchedMoneySchema),
        totals: z.array(unmatchedTotalsSchema),
        totals_by_merchant: z.array(merchantUnmatchedTotalsSchema).meta({
          description:
            "Per merchant and currency, by merchant then currency: the same figures as `totals`, split by whose money (platform mode). A kit of one merchant has that merchant's lines only.",
        }),
      })
      .meta({
        description:
          "Gateway money with no order first seen in the range, and its own totals per currency and per merchant. Each row is the merchant's whose webhook endpoint its event came to: a report of one merchant (`merchant_id`), or of a token scoped to some, holds theirs alone; the report of every merchant has all of it.",
      }),
  })
  .meta({ id: 'ReconciliationReport' });

/** One line of the audit export (src/merchant/reports/audit.ts, AuditRow). */
export const auditEntrySchema = z
  .object({
    id: z.number().int().meta({ description: 'The line, in the order the acts were recorded.' }),
    at: timestamp,
    actor: z.string().meta({
      description:
        "Who: a named operator; with the bootstrap token, the `by` given (default `admin`); `kit` for the kit's own acts.",
    }),
    role: z.string().meta({
      description: '`admin`, `operator`, `finance`, `viewer`, `storefront`, or `system` (the kit).',
    }),
    credential: z.string().meta({
      description:
        "The operator's id (`opr_...`: the name is proven by their token), `bootstrap` (OPS_API_TOKEN: the name is as given), `cli`, or the kit's setting (`AUTH_EXPIRY_POLICY`).",
    }),
    action: z.enum([
      'capture',
      'refund',
      'void',
      'review.resolve',
      'unmatched.attach',
      'unmatched.resolve',
      'dispute.lost',
      'operator.add',
      'operator.revoke',
      'card.revoke',
      'card.charge',
      'customer.vouch',
      'card.pay',
      'customer.erase',
      'order.cancel',
      'order.payment_link',
    ]),
    order_id: z.string().nullable(),
    subject_id: z.string().nullable().meta({
      description:
        'What the act was on: the operation (`op_`), money (`umn_`), dispute (`dsp_`), operator (`opr_`), saved card (`card_`), erased customer (`cer_`: a keyed digest of their id, never the id), payment link (`plk_`).',
    }),
    currency: z.string().nullable(),
    amount: minor.nullable(),
    amount_formatted: formatted.nullable(),
    reason: z.string().nullable().meta({ description: 'The reason or note the person gave.' }),
    detail: z.string().nullable().meta({
      description:
        "What else: a review's resolution and the reason it cleared, the transaction attached, ...",
    }),
    outcome: z.enum(['succeeded', 'pending', 'failed', 'done']).meta({
      description:
        'A capture, refund or void: what became of it at the gateway, as it stands now (`pending`: no answer yet). Every other act: `done`.',
    }),
    gateway_code: z.string().nullable().meta({ description: "A failed operation's gateway code." }),
    request_id: z
      .string()
      .nullable()
      .meta({ description: 'The X-Request-Id of the request that did it: what to search the logs for.' }),
    merchant_id: z.number().int().nullable().meta({
      description:
        "The merchant whose order the act was about (platform mode; an order made before it is the first of `GATEWAY_MERCHANTS`'s); null for an act about no order (an operator added, money with no order resolved).",
    }),
  })
  .meta({ id: 'AuditEntry', description: 'Who did what, on what, and why.' });

export const auditSchema = z
  .object({ from: timestamp, to: timestamp, entries: z.array(auditEntrySchema) })
  .meta({ id: 'AuditExport' });
