import { z } from 'zod';
import { customerSchema, ipAddress } from '../../shared/customer.js';

export { customerSchema, ipAddress };

import { isCurrencyCode, parseMajor } from '../../shared/money.js';
import type { CardFacts } from '../domain/payment-checks.js';

/** Request schemas shared by 3DS verify and transactions (gateway-api.md, Conventions on values). */

export const currencyField = z
  .string({ message: 'is required' })
  .regex(/^[A-Z]{3}$/, 'must be a three-letter uppercase ISO 4217 code')
  .refine(isCurrencyCode, 'is not a supported currency');

/** Major units on the wire: a JSON number, or a plain decimal string. Checked against the currency below. */
export const amountField = z.union([z.number(), z.string()], { message: 'is required and must be a number' });

const expMonth = z
  .union([z.number().int(), z.string().regex(/^\d{1,2}$/)], { message: 'must be a month from 1 to 12' })
  .transform(Number)
  .pipe(z.number().min(1, 'must be a month from 1 to 12').max(12, 'must be a month from 1 to 12'));

const expYear = z
  .union([z.number().int(), z.string().regex(/^\d{4}$/)], { message: 'must be a four-digit year' })
  .transform(Number)
  .pipe(z.number().min(1000, 'must be a four-digit year').max(9999, 'must be a four-digit year'));

/** Messages here never repeat the value: a card number must not reach an error. */
export const cardSchema = z.object({
  number: z.string({ message: 'is required' }).regex(/^\d{12,19}$/, 'must be 12 to 19 digits'),
  exp_month: expMonth,
  exp_year: expYear,
  cvv: z.string({ message: 'is required' }).regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
  name: z.string().max(255).optional(),
});

export type CardInput = z.output<typeof cardSchema>;

/** What the card rules read of a card from a request. */
export function cardFacts(card: CardInput): CardFacts {
  return { number: card.number, expMonth: card.exp_month, expYear: card.exp_year };
}

export const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).max(2048);

/**
 * Adds the exact minor amount to a body with `amount` and `currency`, or an issue on `amount`
 * (sandbox.md section 3: more decimals than the currency has is 422).
 */
export function withMinorAmount<T extends { amount: number | string; currency: string }>(
  body: T,
  ctx: z.core.$RefinementCtx<T>,
): T & { minor: number } {
  if (!isCurrencyCode(body.currency)) return { ...body, minor: 0 }; // currency has its own issue
  const parsed = parseMajor(body.amount, body.currency);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', path: ['amount'], message: parsed.message });
    return { ...body, minor: 0 };
  }
  return { ...body, minor: parsed.minor };
}

export const merchantIdField = z.number().int().positive().nullable().optional();
