import { z } from 'zod';
import { hasCardNumber } from '../../shared/card-numbers.js';
import { customerSchema } from '../../shared/customer.js';
import { parseIsoTime } from '../../shared/iso-time.js';
import { isCurrencyCode, parseMajor } from '../../shared/money.js';
import { DISPUTE_OUTCOMES } from '../orders/disputes.js';
import { LINK_MAX_SECONDS, LINK_MIN_SECONDS } from '../orders/payment-links.js';
import { REVIEW_RESOLUTIONS } from '../orders/review.js';
import { ORDER_STATUSES, type OrderStatus } from '../orders/status.js';

export const NO_CARD_NUMBER = 'must not hold a card number';

/**
 * merchant.md, Card data: the kit keeps no card number. Free text it keeps (a reference, a description,
 * a customer's fields, a reason) is refused, naming the field, when it holds one; `card` is the one
 * place for card data, and it is never stored.
 */
function keepsNoCardNumber<S extends z.ZodType>(schema: S) {
  return schema.superRefine((value, ctx) => {
    const walk = (v: unknown, path: string[]) => {
      if (typeof v === 'string' && hasCardNumber(v))
        ctx.addIssue({ code: 'custom', path, message: NO_CARD_NUMBER });
      else if (v !== null && typeof v === 'object')
        for (const [key, inner] of Object.entries(v))
          if (path.length > 0 || key !== 'card') walk(inner, [...path, key]);
    };
    walk(value, []);
  });
}

/** Card fields, checked for shape before they go to the gateway. Messages never repeat a value. */
const MONTH = 'must be a month from 1 to 12';
const YEAR = 'must be a four-digit year';
export const cardSchema = z.object(
  {
    number: z.string({ message: 'is required' }).regex(/^\d{12,19}$/, 'must be 12 to 19 digits'),
    // Every branch carries the message: a union reports the failing branch's own words.
    exp_month: z.union(
      [
        z.number(MONTH).int(MONTH).min(1, MONTH).max(12, MONTH),
        z.string(MONTH).regex(/^(0?[1-9]|1[0-2])$/, MONTH),
      ],
      { message: MONTH },
    ),
    exp_year: z.union(
      [z.number(YEAR).int(YEAR).min(1000, YEAR).max(9999, YEAR), z.string(YEAR).regex(/^\d{4}$/, YEAR)],
      { message: YEAR },
    ),
    cvv: z.string({ message: 'is required' }).regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
    name: z.string().max(255).optional(),
  },
  { message: 'is required: an object with number, exp_month, exp_year and cvv' },
);

const currency = z
  .string({ message: 'is required' })
  .refine(isCurrencyCode, 'must be a supported ISO 4217 currency code (EUR, USD, GBP, JPY, KWD, ...)');

/** merchant.md: amounts in requests are major units, as a decimal string or a number. */
const amount = z.union([z.string(), z.number()], { message: 'is required: a decimal string or number' });

/**
 * Whether `amount` fits the body's currency (its decimals, its range), an issue naming `amount` if
 * not. Checked even when other fields have issues, so that one 422 names them all (a transform would
 * wait for the rest to be right); not when `amount` or `currency` has an issue of its own, or the body
 * is no object.
 */
const amountFitsCurrency = [
  (body: { amount: string | number; currency: string }, ctx: z.RefinementCtx) => {
    if (!isCurrencyCode(body.currency)) return; // its own issue already
    const parsed = parseMajor(body.amount, body.currency);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', path: ['amount'], message: parsed.message });
  },
  {
    when: (payload: { issues: readonly { path?: readonly PropertyKey[] }[] }) =>
      payload.issues.every(
        (i) =>
          i.path !== undefined && i.path.length > 0 && !['amount', 'currency'].includes(String(i.path[0])),
      ),
  },
] as const;

/** `amount` in the body's currency as minor units (`minor`), or an issue naming `amount`. */
function withMinor<B extends { amount: string | number; currency: string }>(body: B, ctx: z.RefinementCtx) {
  // An unknown currency has its own issue already: nothing to parse against.
  if (!isCurrencyCode(body.currency)) return { ...body, minor: 0 };
  const parsed = parseMajor(body.amount, body.currency);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', path: ['amount'], message: parsed.message });
    return z.NEVER;
  }
  return { ...body, minor: parsed.minor };
}

export const createOrderSchema = keepsNoCardNumber(
  z
    .object({
      amount,
      currency,
      reference: z
        .string()
        .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 printable characters without spaces')
        .optional(),
      description: z.string().max(1024).optional(),
      customer: customerSchema.optional(),
      merchant_id: z.number().int().positive().optional().meta({
        description:
          'The gateway merchant the order is for (platform mode): required when the kit acts for several (`GATEWAY_MERCHANTS`), else the one it acts for.',
      }),
    })
    .superRefine(...amountFitsCurrency)
    .transform(withMinor),
);

const mode = z.enum(['sale', 'auth'], { message: 'must be sale or auth' }).default('sale');

/**
 * The order's client secret in a pay route's body, for a caller that cannot set the `Order-Secret`
 * header (order-access.ts reads it before the body is parsed; the header wins when both are sent).
 */
const clientSecret = z.string().max(255).optional().meta({
  description:
    "The order's client secret (`POST /orders` answered it), when not sent as the `Order-Secret` header.",
});

export const payCardSchema = keepsNoCardNumber(
  z.object({
    card: cardSchema,
    mode,
    customer: customerSchema.optional(),
    client_secret: clientSecret,
    /** Keep the card for the order's customer (issue 21): the shop sends it only with their consent. */
    save_card: z.boolean({ message: 'must be true or false' }).default(false),
  }),
);

/** A saved card's id, as the kit hands it out (`card_` and 24 letters and digits). */
const savedCardId = z
  .string({ message: "is required: the id of one of the customer's saved cards (card_...)" })
  .regex(/^card_[A-Za-z0-9]{24}$/, 'must be the id of a saved card (card_...)');

export const paySavedSchema = keepsNoCardNumber(
  z.object({ card: savedCardId, mode, customer: customerSchema.optional(), client_secret: clientSecret }),
);

/**
 * POST /customers/{id}/tokens: with `order_id`, a token that also pays that order (an order of this
 * customer's); without, one that lists and removes the customer's cards and pays nothing.
 */
/**
 * A merchant in a query (platform mode, issue 45): GET /orders, GET /disputes, GET /payment-methods
 * and the customer routes. Required where the kit serves several and the credential's scope does not
 * say which (order-access.ts requestMerchant).
 */
export const merchantIdQuery = z
  .string()
  .regex(/^[1-9]\d{0,9}$/, 'must be a merchant id (a whole number)')
  .transform(Number)
  .optional()
  .meta({
    description:
      "The gateway merchant (platform mode: one of `GATEWAY_MERCHANTS`, within the credential's scope). Required when the kit acts for several, unless the credential is scoped to one.",
  });

/** The same in a body. */
export const merchantIdBody = z.number().int().positive().optional().meta({
  description:
    "The gateway merchant whose customer it is (platform mode: one of `GATEWAY_MERCHANTS`, within the credential's scope). Required when the kit acts for several, unless the credential is scoped to one.",
});

/** The customer routes' query: whose customer (a customer id names a customer of one merchant). */
export const customerQuerySchema = z.object({ merchant_id: merchantIdQuery });

export const customerTokenSchema = z.object({
  order_id: z
    .string()
    .regex(/^ord_[A-Za-z0-9]{1,60}$/, 'must be an order id (ord_...)')
    .optional(),
  merchant_id: merchantIdBody,
});

/**
 * `merchant_id` in a query (platform mode, issue 45): one merchant's orders, or acts about them. Any
 * merchant id, not only those the kit acts for now: one it acted for before still has its history.
 */
const merchantQuery = z
  .string()
  .regex(/^[1-9]\d{0,9}$/, 'must be a merchant id: a whole number (GATEWAY_MERCHANTS lists them)')
  .transform(Number)
  .refine(Number.isSafeInteger, 'must be a merchant id: a whole number (GATEWAY_MERCHANTS lists them)');

/** `merchant_id` as a filter of orders (the list, the report, the audit): optional, described once. */
export const merchantFilterQuery = merchantQuery.optional().meta({
  description:
    "One gateway merchant's (platform mode): orders that name it and, for the first of `GATEWAY_MERCHANTS`, orders made before platform mode.",
  examples: ['1001'],
});

/** A merchant-initiated charge of a saved card (issue 21, part 4): a new order, paid at once. */
export const chargeSchema = keepsNoCardNumber(
  z
    .object({
      card: savedCardId,
      amount,
      currency,
      description: z.string().max(1024).optional(),
      mode,
      merchant_id: merchantIdBody,
    })
    .superRefine(...amountFitsCurrency)
    .transform(withMinor),
);

export const payRedirectSchema = keepsNoCardNumber(
  z.object({
    payment_method: z.string({ message: 'is required' }).min(1, 'is required').max(64),
    customer: customerSchema.optional(),
    client_secret: clientSecret,
  }),
);

export const methodsQuerySchema = z.object({
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be a 2-letter uppercase country code')
    .optional(),
  currency: currency.optional(),
  merchant_id: merchantIdQuery,
});

/**
 * Who decided, as the caller repeats it: printable, no card number. It must be the caller's own name
 * (actorOf in ops-auth.ts): the token says who acted, and `by` can only agree with it.
 */
const decidedBy = z
  .string()
  .regex(/^[\x20-\x7e]{1,64}$/, 'must be 1 to 64 printable characters')
  .optional();

/** Capture, refund and void: `by` as for every operator's decision (see actorOf in ops-auth.ts). */
export const captureSchema = keepsNoCardNumber(
  z.object({
    amount: amount.optional(),
    /** A capture has no reason at the gateway: a note, kept in the order's history and the audit. */
    note: z.string().max(255).optional(),
    by: decidedBy,
  }),
);
export const refundSchema = keepsNoCardNumber(
  z.object({ amount, reason: z.string().max(255).optional(), by: decidedBy }),
);
export const voidSchema = keepsNoCardNumber(
  z.object({ reason: z.string().max(255).optional(), by: decidedBy }),
);

/** POST /orders/{id}/cancel: why, for the history and the audit log (issue 43, part 2). */
export const cancelSchema = keepsNoCardNumber(
  z.object({ reason: z.string().max(255).optional(), by: decidedBy }),
);

/**
 * POST /orders/{id}/payment-link (issue 43, part 3): how long the link lives, in whole seconds (a
 * minute to 30 days), and the method its visits open a hosted checkout of.
 */
export const paymentLinkSchema = keepsNoCardNumber(
  z.object({
    expires_in: z
      .number({
        message: `is required: whole seconds, from ${LINK_MIN_SECONDS} to ${LINK_MAX_SECONDS} (30 days)`,
      })
      .int('must be a whole number of seconds')
      .min(LINK_MIN_SECONDS, `must be at least ${LINK_MIN_SECONDS} seconds`)
      .max(LINK_MAX_SECONDS, `must be at most ${LINK_MAX_SECONDS} seconds (30 days)`)
      .meta({ description: 'Seconds the link lives: a minute to 30 days.', examples: [604800] }),
    payment_method: z
      .string({ message: 'is required: a payment method of the gateway (GET /payment-methods)' })
      .min(1, 'is required')
      .max(64)
      .meta({ description: "The hosted checkout's method a visit opens (`ideal`, `psc`, ...)." }),
    by: decidedBy,
  }),
);

/** A list's `limit`: 1 to 1000, 100 when not given. */
const listLimit = z
  .string()
  .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 1000')
  .transform(Number)
  .refine((n) => n >= 1 && n <= 1000, 'must be a whole number from 1 to 1000')
  .default(100);

/** Gateway money with no order (issue 19): the operator's list, attach and resolve. */
export const unmatchedListQuerySchema = z.object({
  resolution: z
    .enum(['open', 'attached', 'resolved'], { message: 'must be open, attached or resolved' })
    .optional(),
  /** One merchant's money (platform mode); a scoped credential sees its merchants' alone. */
  merchant_id: merchantIdQuery,
  limit: listLimit,
});

/** Disputes (issue 19): the operator's list, and a dispute lost. */
export const disputeListQuerySchema = z.object({
  outcome: z.enum(DISPUTE_OUTCOMES, { message: 'must be open, won or lost' }).optional(),
  merchant_id: merchantIdQuery,
  limit: listLimit,
});

/** A lost dispute: the note says what the bank decided, for whoever reads the order later. */
export const loseDisputeSchema = keepsNoCardNumber(
  z.object({
    note: z
      .string({ message: 'is required: what the bank decided, for whoever reads this later' })
      .trim()
      .min(1, 'is required: what the bank decided, for whoever reads this later')
      .max(512, 'must be at most 512 characters'),
    by: decidedBy,
  }),
);

export const attachSchema = keepsNoCardNumber(
  z.object({
    order_id: z
      .string({ message: 'is required: the id of the order the money belongs to' })
      .regex(/^[\x21-\x7e]{1,32}$/, 'must be an order id (`ord_...`)'),
    by: decidedBy,
  }),
);

export const resolveSchema = keepsNoCardNumber(
  z.object({
    note: z
      .string({ message: 'is required: what was found, for whoever reads this later' })
      .trim()
      .min(1, 'is required: what was found, for whoever reads this later')
      .max(512, 'must be at most 512 characters'),
    by: decidedBy,
  }),
);

const ISO_TIME_WANTED =
  'must be a real ISO 8601 date, or time with Z or an offset, such as 2026-11-23 or 2026-11-23T08:00:00Z';

/** A query's point in time: an ISO 8601 date (its midnight, UTC) or time with Z or an offset, real. */
export const isoTime = z
  .string({ message: 'is required: an ISO 8601 date or time, such as 2026-11-23 or 2026-11-23T08:00:00Z' })
  .transform((v, ctx) => {
    const at = parseIsoTime(v);
    if (at !== null) return at;
    ctx.addIssue({ code: 'custom', message: ISO_TIME_WANTED });
    return z.NEVER;
  });

const STATUS_LIST = `must be one or more of ${ORDER_STATUSES.join(', ')}, separated by commas`;

/** GET /orders: the operators' list of orders; `needs_review=true` is the review queue. */
export const orderListQuerySchema = z.object({
  needs_review: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .transform((v) => v === 'true')
    .optional(),
  status: z
    .string()
    .regex(/^[a-z_]+(,[a-z_]+)*$/, STATUS_LIST)
    .transform((v) => [...new Set(v.split(','))])
    .refine((list) => list.every((x) => (ORDER_STATUSES as readonly string[]).includes(x)), STATUS_LIST)
    .transform((list) => list as OrderStatus[])
    .optional(),
  currency: currency.optional(),
  /** The order that carries this reference (unique: at most one). */
  reference: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 printable characters without spaces')
    .optional(),
  /** Created from here (inclusive). */
  created_from: isoTime.optional(),
  /** Created before here (exclusive). */
  created_to: isoTime.optional(),
  limit: listLimit,
  /** `next_cursor` of the page before. */
  cursor: z.string().max(256, 'is not a cursor this list gave').optional(),
  /** One merchant's orders (platform mode); a scoped credential sees its merchants' alone. */
  merchant_id: merchantIdQuery,
});

/** POST /orders/{id}/review: what a person decided of a flagged order, and why. */
export const reviewSchema = keepsNoCardNumber(
  z.object({
    resolution: z.enum(REVIEW_RESOLUTIONS, { message: `must be one of ${REVIEW_RESOLUTIONS.join(', ')}` }),
    note: z
      .string({ message: 'is required: what was found and done, for whoever reads this later' })
      .trim()
      .min(1, 'is required: what was found and done, for whoever reads this later')
      .max(512, 'must be at most 512 characters'),
    by: decidedBy,
  }),
);

/** GET /audit: the acts of [from, to). */
export const auditQuerySchema = z.object({
  from: isoTime,
  to: isoTime,
  format: z.enum(['csv', 'json'], { message: 'must be csv or json' }).default('csv'),
  /** The acts about this merchant's orders only (platform mode). */
  merchant_id: merchantFilterQuery,
});
