import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { CURRENCY_EXPONENTS, isCurrencyCode } from '../../shared/money.js';
import { SettingError } from '../../shared/setting-error.js';
import { DEFAULT_AUTH_LIFETIME_S } from '../domain/auth-lifetime.js';

const MAX_AUTH_LIFETIME_S = 10 * 365 * 24 * 60 * 60;

const currency = z.string().refine(isCurrencyCode, { message: 'must be a platform currency' });
const country = z.string().regex(/^[A-Z]{2}$/, 'must be a 2-letter uppercase country code');

const paymentMethodSchema = z.strictObject({
  payment_method: z.string().min(1),
  label: z.string().min(1),
  provider: z.string().min(1),
  countries: z.array(country),
  currencies: z.array(currency),
  enabled: z.boolean(),
  /** sandbox.md section 11: false makes refunds of this method's payments 400 ERR_REFUND_NOT_SUPPORTED. */
  refunds: z.boolean().default(true),
});

const merchantSchema = z.strictObject({
  id: z.number().int().positive(),
  name: z.string().min(1),
  active: z.boolean(),
  currencies: z.array(currency).min(1),
  webhook_readiness_gate: z.boolean(),
  payment_methods: z.array(paymentMethodSchema),
});

const apiKeySchema = z
  .strictObject({
    key: z.string().min(8),
    merchant_id: z.number().int().positive().optional(),
    partner_id: z.number().int().positive().optional(),
    scopes: z.array(z.string()),
    active: z.boolean(),
  })
  .refine((k) => (k.merchant_id === undefined) !== (k.partner_id === undefined), {
    message: 'must have exactly one of merchant_id and partner_id',
  });

const settingsSchema = z
  .strictObject({
    allow_private_webhook_urls: z.boolean().default(false),
    rate_limit: z
      .strictObject({
        limit: z.number().int().positive().default(1000),
        window_s: z.number().int().positive().default(60),
        slowdown: z.array(z.tuple([z.number().int().nonnegative(), z.number().nonnegative()])).default([
          [500, 0.5],
          [750, 1.0],
        ]),
      })
      .prefault({}), // absent: parsed as {}, so each field's default above applies, written once
    public_pages_per_minute: z.number().int().positive().default(60),
    // sandbox.md section 11. Bounded so that every deadline is a timestamp a record can show.
    auth_lifetime_s: z
      .number()
      .int()
      .positive()
      .max(MAX_AUTH_LIFETIME_S, 'must be at most ten years (315360000 s)')
      .default(DEFAULT_AUTH_LIFETIME_S),
    // Ours (docs/sandbox-decisions.md): the share of acquirer ids drawn as digits that read as a card
    // number, as a gateway's numeric ids do. For tests of a receiver; 0, the default, draws hex.
    card_like_acquirer_ids: z.number().min(0).max(1).default(0),
  })
  .prefault({});

/** sandbox.md section 2. Every field is required except `settings` and each of its fields. */
export const seedSchema = z
  .strictObject({
    merchants: z.array(merchantSchema).min(1),
    partners: z.array(
      z.strictObject({ id: z.number().int().positive(), merchant_ids: z.array(z.number().int()) }),
    ),
    api_keys: z.array(apiKeySchema).min(1),
    settings: settingsSchema,
  })
  .superRefine((seed, ctx) => {
    const fail = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: 'custom', path, message });
    const merchantIds = new Set<number>();
    seed.merchants.forEach((m, i) => {
      if (merchantIds.has(m.id)) fail(['merchants', i, 'id'], 'is a duplicate');
      merchantIds.add(m.id);
    });
    const partnerIds = new Set(seed.partners.map((p) => p.id));
    seed.partners.forEach((p, i) => {
      p.merchant_ids.forEach((id, j) => {
        if (!merchantIds.has(id)) fail(['partners', i, 'merchant_ids', j], `names no merchant (${id})`);
      });
    });
    const keys = new Set<string>();
    seed.api_keys.forEach((k, i) => {
      if (keys.has(k.key)) fail(['api_keys', i, 'key'], 'is a duplicate');
      keys.add(k.key);
      if (k.merchant_id !== undefined && !merchantIds.has(k.merchant_id))
        fail(['api_keys', i, 'merchant_id'], `names no merchant (${k.merchant_id})`);
      if (k.partner_id !== undefined && !partnerIds.has(k.partner_id))
        fail(['api_keys', i, 'partner_id'], `names no partner (${k.partner_id})`);
    });
    const { limit, slowdown } = seed.settings.rate_limit;
    slowdown.forEach(([n], i) => {
      const previous = slowdown[i - 1];
      if (n >= limit) fail(['settings', 'rate_limit', 'slowdown', i], 'must start below limit');
      if (previous && n <= previous[0])
        fail(['settings', 'rate_limit', 'slowdown', i], 'must be in ascending order');
    });
  });

export type Seed = z.output<typeof seedSchema>;
export type SeedInput = z.input<typeof seedSchema>;
export type SeedMerchant = Seed['merchants'][number];
export type SeedApiKey = Seed['api_keys'][number];

export class SeedError extends SettingError {
  override name = 'SeedError';
  readonly label = 'gateway seed';
}

/** Validates a parsed seed; the error names the first bad field, e.g. `api_keys.1.merchant_id: names no merchant (7)`. */
export function parseSeed(input: unknown, source = 'seed'): Seed {
  const result = seedSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.') || '(root)';
  throw new SeedError(`${source}: ${field}: ${issue.message}`);
}

export async function loadSeedFile(path: string): Promise<Seed> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new SeedError(`${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    // Node quotes part of the file in the message, line breaks included: start-up errors stay one line.
    throw new SeedError(`${path}: is not valid JSON (${(e as Error).message.replace(/\s+/g, ' ')})`);
  }
  return parseSeed(json, path);
}

export const PLATFORM_CURRENCIES = Object.keys(CURRENCY_EXPONENTS);
