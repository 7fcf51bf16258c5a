import type { z } from 'zod';
import type { envSchema, Reader } from './config.js';
import { unsafeSettings } from './config-guards.js';
import { type CurrencyCode, parseMajor } from './shared/money.js';

/**
 * Every bad setting at once (issue 42, part 4): an operator fixing a `.env` sees each variable that
 * is wrong in one run, one line each naming it, instead of one per start. Pure: the environment in,
 * the settings and the lines out. The lines come in the order of their kinds: values that do not
 * parse, settings a required one is missing beside, the production guards (config-guards.ts), then
 * the settings that contradict each other; a variable is named once, by its first line.
 */

/** The parsed settings: what `envSchema` gives. */
export type Settings = z.output<typeof envSchema>;

/** What the checks need besides the settings: who reads them, and what config.ts derives from them. */
export interface SettingFacts {
  reader: Reader;
  /** GATEWAY_BASE_URL when it names a gateway (not `embedded`); null otherwise. */
  remoteGateway: string | null;
  /** APP_ENCRYPTION_KEY's bytes; null when it is not set. */
  currentKey: Buffer | null;
  /** APP_ENCRYPTION_KEY's bytes are the development key's. */
  isDevelopmentKey: boolean;
}

/**
 * Each variable of `schema` parsed on its own, so that one bad value hides neither another nor the
 * checks that do not read it: the values that parsed, and a line for each variable that did not.
 */
export function parseEach(
  schema: typeof envSchema,
  env: Readonly<Record<string, string>>,
): { settings: Settings; unreadable: Map<string, string> } {
  const values: Record<string, unknown> = {};
  const unreadable = new Map<string, string>();
  for (const [name, field] of Object.entries(schema.shape)) {
    const parsed = (field as z.ZodType).safeParse(env[name]);
    if (parsed.success) values[name] = parsed.data;
    else {
      const why = [...new Set(parsed.error.issues.map((i) => i.message))].join('; ');
      unreadable.set(name, `${name}: ${why}`);
    }
  }
  // A variable that did not parse is missing here, and every check that reads it is skipped.
  return { settings: values as Settings, unreadable };
}

/** A check over several settings: the variables it reads, and its lines naming what to fix. */
interface Check {
  reads: readonly (keyof Settings)[];
  kit?: boolean;
  problems: (e: Settings, f: SettingFacts) => (string | null)[];
}

const production = (e: Settings) => e.NODE_ENV === 'production';

/** Settings that must be there, because of where the kit runs or of another setting. */
const REQUIRED: readonly Check[] = [
  {
    reads: ['NODE_ENV', 'APP_ENCRYPTION_KEY'],
    problems: (e) => [
      production(e) && !e.APP_ENCRYPTION_KEY
        ? 'APP_ENCRYPTION_KEY: is required in production (32 bytes, base64)'
        : null,
    ],
  },
  {
    reads: ['NODE_ENV', 'OPS_API_TOKEN'],
    kit: true,
    problems: (e) => [production(e) && !e.OPS_API_TOKEN ? 'OPS_API_TOKEN: is required in production' : null],
  },
  {
    // A production kit without a gateway would take "payments" against its own sandbox: only on purpose.
    reads: ['NODE_ENV', 'GATEWAY_BASE_URL'],
    kit: true,
    problems: (e) => [
      production(e) && !e.GATEWAY_BASE_URL
        ? "GATEWAY_BASE_URL: is required in production (the gateway's URL; embedded runs the built-in sandbox, for a demo)"
        : null,
    ],
  },
  {
    reads: ['GATEWAY_BASE_URL', 'GATEWAY_API_KEY'],
    problems: (e, f) => [
      f.remoteGateway && !e.GATEWAY_API_KEY
        ? 'GATEWAY_API_KEY: is required when GATEWAY_BASE_URL is set'
        : null,
    ],
  },
  {
    reads: ['SHOP_WEBHOOK_URLS', 'SHOP_WEBHOOK_SECRET'],
    problems: (e) => [
      e.SHOP_WEBHOOK_URLS.length > 0 && !e.SHOP_WEBHOOK_SECRET
        ? 'SHOP_WEBHOOK_SECRET: is required when SHOP_WEBHOOK_URLS is set (whsec_ and 32 random bytes, base64-encoded)'
        : null,
    ],
  },
];

/** Settings that contradict each other. */
const CONSISTENT: readonly Check[] = [
  {
    reads: ['GATEWAY_MERCHANTS', 'GATEWAY_MERCHANT_ID'],
    problems: (e) => [
      e.GATEWAY_MERCHANTS !== undefined && e.GATEWAY_MERCHANT_ID !== undefined
        ? 'GATEWAY_MERCHANT_ID: is set beside GATEWAY_MERCHANTS, which replaces it: list the merchants there alone'
        : null,
    ],
  },
  {
    // A key for a merchant the kit does not act for would never be used: a typo, most likely.
    reads: ['GATEWAY_MERCHANT_KEYS', 'GATEWAY_MERCHANTS', 'GATEWAY_MERCHANT_ID'],
    problems: (e) => {
      const listed =
        e.GATEWAY_MERCHANTS ?? (e.GATEWAY_MERCHANT_ID === undefined ? [] : [e.GATEWAY_MERCHANT_ID]);
      const stray = [...(e.GATEWAY_MERCHANT_KEYS?.keys() ?? [])].find((id) => !listed.includes(id));
      return [
        stray === undefined
          ? null
          : `GATEWAY_MERCHANT_KEYS: gives a key for merchant ${stray}, which GATEWAY_MERCHANTS does not list`,
      ];
    },
  },
  {
    // Platform mode: each merchant's endpoint signs with its own secret, so a secret must say whose.
    reads: ['GATEWAY_WEBHOOK_SECRETS', 'GATEWAY_MERCHANTS', 'GATEWAY_MERCHANT_ID'],
    problems: (e) => {
      const listed =
        e.GATEWAY_MERCHANTS ?? (e.GATEWAY_MERCHANT_ID === undefined ? [] : [e.GATEWAY_MERCHANT_ID]);
      const secrets = e.GATEWAY_WEBHOOK_SECRETS;
      if (!secrets) return [];
      const stray = [...secrets.byMerchant.keys()].find((id) => !listed.includes(id));
      if (stray !== undefined)
        return [
          `GATEWAY_WEBHOOK_SECRETS: gives a secret for merchant ${stray}, which GATEWAY_MERCHANTS does not list`,
        ];
      return [
        listed.length > 1 && secrets.plain.length > 0
          ? `GATEWAY_WEBHOOK_SECRETS: names no merchant for a secret, and this kit acts for several (${listed.join(', ')}): write each as merchant_id=secret`
          : null,
      ];
    },
  },
  {
    reads: ['APP_ENCRYPTION_KEY', 'APP_ENCRYPTION_KEY_PREVIOUS'],
    problems: (e, f) => [
      e.APP_ENCRYPTION_KEY_PREVIOUS.length > 0 && !e.APP_ENCRYPTION_KEY
        ? 'APP_ENCRYPTION_KEY_PREVIOUS: is set without APP_ENCRYPTION_KEY, the key replacing them'
        : null,
      // By the bytes: one key written with and without its padding is one key.
      f.currentKey !== null &&
      e.APP_ENCRYPTION_KEY_PREVIOUS.some((k) => Buffer.from(k, 'base64').equals(f.currentKey!))
        ? 'APP_ENCRYPTION_KEY_PREVIOUS: lists APP_ENCRYPTION_KEY itself; list only the keys it replaced'
        : null,
    ],
  },
  // The limits must be expressible in each currency taken (no more decimals than its exponent).
  {
    reads: ['ORDER_CURRENCIES', 'ORDER_MAX_AMOUNT'],
    problems: (e) => [tooPrecise('ORDER_MAX_AMOUNT', e.ORDER_MAX_AMOUNT, e.ORDER_CURRENCIES)],
  },
  {
    reads: ['ORDER_CURRENCIES', 'SAVED_CARD_DAILY_AMOUNT'],
    problems: (e) => [tooPrecise('SAVED_CARD_DAILY_AMOUNT', e.SAVED_CARD_DAILY_AMOUNT, e.ORDER_CURRENCIES)],
  },
  {
    reads: ['GATEWAY_BACKGROUND_PER_MINUTE', 'GATEWAY_KEY_PER_MINUTE'],
    problems: (e) => [
      e.GATEWAY_BACKGROUND_PER_MINUTE >= e.GATEWAY_KEY_PER_MINUTE
        ? `GATEWAY_BACKGROUND_PER_MINUTE: must be below GATEWAY_KEY_PER_MINUTE (${e.GATEWAY_KEY_PER_MINUTE}), so that checkout always has a share`
        : null,
    ],
  },
  {
    reads: ['GATEWAY_BACKGROUND_RESERVED_PER_MINUTE', 'GATEWAY_BACKGROUND_PER_MINUTE'],
    problems: (e) => [
      e.GATEWAY_BACKGROUND_RESERVED_PER_MINUTE > e.GATEWAY_BACKGROUND_PER_MINUTE
        ? `GATEWAY_BACKGROUND_RESERVED_PER_MINUTE: must be at most GATEWAY_BACKGROUND_PER_MINUTE (${e.GATEWAY_BACKGROUND_PER_MINUTE})`
        : null,
    ],
  },
];

/**
 * Every problem of the settings, one line per variable naming it: `unreadable` (parseEach's lines),
 * then the checks, each run only when every variable it reads parsed.
 */
export function settingProblems(
  e: Settings,
  unreadable: ReadonlyMap<string, string>,
  f: SettingFacts,
): string[] {
  const lines = new Map<string, string>(unreadable);
  const add = (line: string | null) => {
    const name = line?.slice(0, line.indexOf(':'));
    if (line && name && !lines.has(name)) lines.set(name, line);
  };
  const run = (checks: readonly Check[]) => {
    for (const c of checks)
      if ((!c.kit || f.reader === 'kit') && !c.reads.some((name) => unreadable.has(name)))
        c.problems(e, f).forEach(add);
  };
  run(REQUIRED);
  if (f.reader === 'kit')
    unsafeSettings(
      {
        production: production(e),
        remoteGateway: f.remoteGateway,
        allowRemoteGatewayInDevelopment: e.ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT,
        opsApiToken: e.OPS_API_TOKEN,
        encryptionKeyIsDevelopmentKey: f.isDevelopmentKey,
        roles: e.ROLES,
        metricsToken: e.METRICS_TOKEN,
        metricsPort: e.METRICS_PORT,
      },
      new Set(unreadable.keys()),
    ).forEach(add);
  run(CONSISTENT);
  return [...lines.values()];
}

/** `name`'s line when `amount` has more decimals than one of `currencies` allows; null otherwise. */
function tooPrecise(name: string, amount: string, currencies: readonly string[]): string | null {
  const refused = currencies.find((c) => !parseMajor(amount, c as CurrencyCode).ok);
  return refused === undefined ? null : `${name}: has more decimals than ${refused} allows`;
}
