import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { parseEach, settingProblems } from './config-problems.js';
import {
  configuredMerchants,
  merchantKeysSetting,
  merchantsSetting,
  webhookSecretsSetting,
} from './gateway-merchants.js';
import { type JobSchedules, parseJobSchedules } from './job-schedules.js';
import { orderTtlSetting } from './order-ttl.js';
import { retentionDays } from './retention-days.js';
import { DATABASE_NAME_RULE, databaseNameIn } from './shared/database-url.js';
import { type CurrencyCode, isCurrencyCode } from './shared/money.js';
import { SettingError } from './shared/setting-error.js';

/** The embedded sandbox's merchant key (config/gateway-seed.json), the default when no gateway is configured. */
export const SANDBOX_MERCHANT_KEY = 'sk_test_merchant_1001';

/**
 * A fixed development key, announced with a warning; production refuses to start without its own,
 * and refuses this one by its bytes: the same key written without padding is the same key.
 */
const DEV_ENCRYPTION_KEY_BYTES = Buffer.alloc(32, 7);
const DEV_ENCRYPTION_KEY = DEV_ENCRYPTION_KEY_BYTES.toString('base64');

export type Role = 'api' | 'worker' | 'scheduler';
const ROLES = ['api', 'worker', 'scheduler'] as const;

export { JOB_NAMES, type JobName, type JobSchedules, parseJobSchedules } from './job-schedules.js';

/** GATEWAY_BASE_URL's word for the sandbox the kit runs itself (the default outside production). */
export const EMBEDDED = 'embedded';

/** Who reads the settings: the kit (and its CLI), or the standalone sandbox, which is a gateway itself. */
export type Reader = 'kit' | 'sandbox';

/** Every bad setting of one start, a line each: `VARIABLE: why`. */
export class ConfigError extends SettingError {
  override name = 'ConfigError';
  readonly label = 'configuration';
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : [...problems];
    super(list.join('\n'));
    this.problems = list;
  }

  /** `configuration: VARIABLE: why`, one for each. */
  override lines(): string[] {
    return this.problems.map((p) => `${this.label}: ${p}`);
  }
}

const port = z
  .string()
  .regex(/^\d+$/, 'must be a port number from 0 to 65535')
  .transform(Number)
  .refine((n) => n <= 65535, 'must be a port number from 0 to 65535');
const milliseconds = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .refine((n) => n <= 3_600_000, 'must be at most 3600000 (an hour)');
/** An encryption key as the operator writes it: 32 bytes, base64 (openssl rand -base64 32). */
const isKey = (v: string) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32;
/** `a, b,c` -> ['a', 'b', 'c']: blanks dropped. */
const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);

/** A limit of `count` requests per `seconds`, counted in a fixed window (rate-limiter-flexible). */
export interface RateLimit {
  count: number;
  seconds: number;
}
const PERIOD_SECONDS = { s: 1, m: 60, h: 3600 } as const;
/** `30/1m` (30 a minute), `10/10m`, `5/30s`, `100/h`; `off`: no limit. */
const rateLimit = z.string().transform((v, ctx): RateLimit | null => {
  if (v === 'off') return null;
  const m = /^(\d{1,6})\/(\d{0,5})([smh])$/.exec(v);
  const count = m ? Number(m[1]) : 0;
  const seconds = m ? Number(m[2] || '1') * PERIOD_SECONDS[m[3] as keyof typeof PERIOD_SECONDS] : 0;
  if (!m || count < 1 || seconds < 1 || seconds > 86_400) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a count per period of at most a day, such as 30/1m (s, m or h), or off',
    });
    return z.NEVER;
  }
  return { count, seconds };
});

const isUrl = (v: string, protocols: string[]) => {
  try {
    return protocols.includes(new URL(v).protocol);
  } catch {
    return false;
  }
};
const url = (protocols: string[], what: string) =>
  z.string().refine((v) => isUrl(v, protocols), `must be a ${what} URL`);

/** Every variable the kit reads: also what a test clears from a child process's inherited environment. */
export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: port.default(3000),
  // The address the kit listens on: unset, 0.0.0.0 in production (a container's), 127.0.0.1 otherwise.
  HOST: z
    .string()
    .refine((v) => isIP(v) !== 0, 'must be an IP address to listen on, such as 127.0.0.1 or 0.0.0.0')
    .optional(),
  PUBLIC_BASE_URL: url(['http:', 'https:'], 'http(s)').optional(),
  DATABASE_URL: url(['mysql:', 'mariadb:'], 'mysql://')
    .refine((v) => !isUrl(v, ['mysql:', 'mariadb:']) || databaseNameIn(v) !== null, DATABASE_NAME_RULE)
    .default('mysql://root@127.0.0.1:3306/merchant'),
  REDIS_URL: url(['redis:', 'rediss:'], 'redis://').default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, _ or -')
    .default('kit'),
  GATEWAY_BASE_URL: z
    .string()
    .refine(
      (v) => v === EMBEDDED || isUrl(v, ['http:', 'https:']),
      `must be the gateway's http(s) URL, or ${EMBEDDED} for the built-in sandbox`,
    )
    .optional(),
  GATEWAY_API_KEY: z.string().min(8, 'must be an API key').optional(),
  // Outside production a gateway off this machine is refused unless this says it is meant (config-guards.ts).
  ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true')
    .default(false),
  GATEWAY_MERCHANT_ID: z
    .string()
    .regex(/^\d+$/, 'must be a merchant id (an integer)')
    .transform(Number)
    .optional(),
  GATEWAY_MERCHANTS: merchantsSetting.optional(),
  GATEWAY_MERCHANT_KEYS: merchantKeysSetting.optional(),
  GATEWAY_WEBHOOK_SECRETS: webhookSecretsSetting.optional(),
  GATEWAY_PORT: port.default(4010),
  // The standalone sandbox's address: loopback on a machine, 0.0.0.0 in a container to be reachable.
  GATEWAY_HOST: z
    .string()
    .refine((v) => isIP(v) !== 0, 'must be an IP address to listen on, such as 127.0.0.1 or 0.0.0.0')
    .default('127.0.0.1'),
  GATEWAY_PUBLIC_URL: url(['http:', 'https:'], 'http(s)').optional(),
  GATEWAY_BACKGROUND_PER_MINUTE: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of requests a minute')
    .transform(Number)
    .refine(
      (n) => n >= 1 && n <= 499,
      "must be from 1 to 499: background calls stay under the gateway's slowdown at 500 a minute",
    )
    .default(400),
  GATEWAY_KEY_PER_MINUTE: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of requests a minute')
    .transform(Number)
    .refine(
      (n) => n >= 2 && n <= 1000,
      "must be from 2 to 1000: the gateway refuses a key's calls from 1000 a minute",
    )
    .default(900),
  GATEWAY_BACKGROUND_RESERVED_PER_MINUTE: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of requests a minute')
    .transform(Number)
    .default(100),
  GATEWAY_SEED: z.string().min(1).default('config/gateway-seed.json'),
  OPS_API_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  APP_ENCRYPTION_KEY: z.string().refine(isKey, 'must be 32 bytes, base64-encoded').optional(),
  APP_ENCRYPTION_KEY_PREVIOUS: commaList
    .refine((keys) => keys.every(isKey), 'must list keys of 32 bytes, base64-encoded, comma-separated')
    .default([]),
  ROLES: commaList
    .refine(
      (list) => list.length > 0 && list.every((r) => (ROLES as readonly string[]).includes(r)),
      `must list some of ${ROLES.join(', ')}`,
    )
    .default(['api', 'worker', 'scheduler']),
  JOB_SCHEDULES: z
    .string()
    .transform((v, ctx) => {
      const parsed = parseJobSchedules(v);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    })
    .default({}),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  SHOP_URL: url(['http:', 'https:'], 'http(s)').optional(),
  SHOP_WEBHOOK_URLS: commaList
    .refine(
      (list) => list.every((u) => url(['http:', 'https:'], 'http(s)').safeParse(u).success),
      'must be comma-separated http(s) URLs of the shop endpoints that take order events',
    )
    .default([]),
  SHOP_WEBHOOK_SECRET: z
    .string()
    .refine((v) => {
      const key = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(v)?.[1];
      const bytes = key ? Buffer.from(key, 'base64').length : 0;
      return bytes >= 24 && bytes <= 64;
    }, 'must be a Standard Webhooks secret: whsec_ and 24 to 64 random bytes, base64-encoded')
    .optional(),
  ORDER_CURRENCIES: commaList
    .refine(
      (list) => list.length > 0 && list.every(isCurrencyCode),
      'must be comma-separated platform currencies (EUR, USD, GBP, CHF, SEK, NOK, DKK, PLN, CZK, JPY, KWD, BHD)',
    )
    .default(['EUR', 'USD', 'GBP', 'JPY']),
  ORDER_MAX_AMOUNT: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,3})?$/, 'must be a positive amount in major units, such as 1000000.00')
    .refine((v) => Number(v) > 0, 'must be a positive amount in major units, such as 1000000.00')
    .default('1000000.00'),
  AUTH_EXPIRY_WARNING: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of hours')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 24 * 365, 'must be from 1 to 8760 hours')
    .default(48),
  AUTH_EXPIRY_POLICY: z
    .enum(['none', 'capture', 'void'], { error: 'must be none, capture or void' })
    .default('none'),
  ORDER_TTL: orderTtlSetting,
  SHUTDOWN_GRACE_MS: milliseconds.default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: milliseconds.refine((n) => n >= 1000, 'must be at least 1000').default(30_000),
  GATEWAY_SANDBOX_STATE: z.string().min(1).default('var/sandbox-state.json'),
  // Checkout under abuse: limits per client address and per order (docs/api.md, Limits).
  TRUST_PROXY: z
    .string()
    .transform((v, ctx) => {
      const hops = v === 'false' || v === 'off' ? 0 : v === 'true' ? 1 : /^\d{1,2}$/.test(v) ? Number(v) : -1;
      if (hops < 0 || hops > 10) {
        ctx.addIssue({
          code: 'custom',
          message:
            'must be the number of proxies in front of the kit whose PROXY_IP_HEADER to believe, 0 to 10 (true: 1; false: 0)',
        });
        return z.NEVER;
      }
      return hops;
    })
    .default(0),
  PROXY_IP_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name, such as X-Forwarded-For')
    .default('X-Forwarded-For'),
  // Per address: generous, since many shoppers may share one (an office, a mobile carrier's NAT);
  // per order and the failed-attempt cap are what stop card testing on one order.
  LIMIT_ORDERS_PER_ADDRESS: rateLimit.default({ count: 60, seconds: 60 }),
  LIMIT_PAY_PER_ADDRESS: rateLimit.default({ count: 60, seconds: 60 }),
  LIMIT_PAY_PER_ORDER: rateLimit.default({ count: 10, seconds: 600 }),
  LIMIT_LANDING_PER_ADDRESS: rateLimit.default({ count: 120, seconds: 60 }),
  LIMIT_LANDING_PER_ORDER: rateLimit.default({ count: 20, seconds: 60 }),
  LIMIT_PAYMENT_METHODS_PER_ADDRESS: rateLimit.default({ count: 120, seconds: 60 }),
  // Wrong tokens at POST /ops/login: a person mistypes a few, a guesser needs millions.
  LIMIT_LOGIN_FAILURES_PER_ADDRESS: rateLimit.default({ count: 5, seconds: 900 }),
  // Customer tokens a credential mints: one a checkout; a leaked storefront credential mints no more.
  LIMIT_CUSTOMER_TOKENS_PER_CREDENTIAL: rateLimit.default({ count: 120, seconds: 60 }),
  // What a customer's saved cards pay with the shopper there (a token minted for the order), in 24 h;
  // past it an operator charges (docs/saved-cards.md). The amount: major units, the same number in
  // every currency, as ORDER_MAX_AMOUNT.
  SAVED_CARD_DAILY_PAYMENTS: z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number of payments, 1 to 9999')
    .transform(Number)
    .refine((n) => n >= 1, 'must be a whole number of payments, 1 to 9999')
    .default(5),
  SAVED_CARD_DAILY_AMOUNT: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,3})?$/, 'must be a positive amount in major units, such as 500.00')
    .refine((v) => Number(v) > 0, 'must be a positive amount in major units, such as 500.00')
    .default('500.00'),
  // Wrong bearer tokens (the API, the queue board, /metrics): a client with a stale token stops soon.
  LIMIT_TOKEN_FAILURES_PER_ADDRESS: rateLimit.default({ count: 10, seconds: 900 }),
  // GET /customers/{id}/cards (issue 41): a checkout page lists a customer's cards a few times; each
  // list outside the sync window below costs the key 1 to 10 gateway calls.
  LIMIT_CARD_LISTS_PER_CUSTOMER: rateLimit.default({ count: 30, seconds: 60 }),
  LIMIT_CARD_LISTS_PER_ADDRESS: rateLimit.default({ count: 60, seconds: 60 }),
  // How long after a gateway list the kit answers a customer's cards from its own rows (0: ask each time).
  SAVED_CARDS_SYNC_WINDOW_MS: milliseconds.default(30_000),
  MAX_FAILED_ATTEMPTS_PER_ORDER: z
    .string()
    .transform((v, ctx) => {
      if (v === 'off') return null;
      if (!/^\d{1,4}$/.test(v) || Number(v) < 1) {
        ctx.addIssue({ code: 'custom', message: 'must be a whole number from 1 to 9999, or off' });
        return z.NEVER;
      }
      return Number(v);
    })
    .default(5),
  RETENTION_DAYS: retentionDays,
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  METRICS_PORT: port.optional(),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  /**
   * The address the API (and METRICS_PORT) listens on (HOST): 0.0.0.0 in production unless set,
   * 127.0.0.1 elsewhere, so that a developer's kit (its demo shop, its generated token) is not served
   * to the network it happens to be on.
   */
  host: string;
  /** Null when not set: then `http://127.0.0.1:<the port actually bound>`. */
  publicBaseUrl: string | null;
  databaseUrl: string;
  redisUrl: string;
  /** Keys of the queue, the locks and the budget: every process of one kit shares it; two kits on one Redis must not. */
  redisPrefix: string;
  gateway: {
    /** Null: start the embedded sandbox and use it. */
    baseUrl: string | null;
    apiKey: string;
    /**
     * The merchants the kit acts for (GATEWAY_MERCHANTS, or GATEWAY_MERCHANT_ID): with a partner key,
     * linked merchants; with a merchant key, empty or its own. Empty: the key's own account.
     */
    merchants: number[];
    /** A merchant's own key beside a partner key (GATEWAY_MERCHANT_KEYS), for what partners may not do. */
    merchantKeys: ReadonlyMap<number, string>;
    /** Operator-supplied signing secrets, accepted beside the stored ones (GATEWAY_WEBHOOK_SECRETS, naming no merchant). */
    extraWebhookSecrets: string[];
    /** GATEWAY_WEBHOOK_SECRETS' `merchant_id=secret` ones, by merchant (platform mode: each merchant's endpoint its own). */
    merchantWebhookSecrets: ReadonlyMap<number, string[]>;
    /** Background calls (poller, recovery, health, the CLI's bulk commands) a minute, all processes together. */
    backgroundPerMinute: number;
    /** Every call of the key a minute, all processes together: the kit's ceiling, under the gateway's 1000. */
    keyPerMinute: number;
    /** Background calls a minute that checkout traffic can never take. */
    backgroundReservedPerMinute: number;
    sandboxPort: number;
    /** The address the standalone sandbox listens on (GATEWAY_HOST). */
    sandboxHost: string;
    /** Where browsers reach the standalone sandbox's hosted pages; null: the origin of each request. */
    sandboxPublicUrl: string | null;
    sandboxSeed: string;
    /** Where the embedded or standalone sandbox keeps its state across restarts; null: in memory only. */
    sandboxStateFile: string | null;
  };
  /** Where the landing pages link back to; null: the kit's own `/`. */
  shopUrl: string | null;
  /** The shop's endpoints for order events (issue 20) and the Standard Webhooks secret they are signed with. */
  shopWebhooks: { urls: string[]; secret: string | null };
  /** What orders may be taken in (merchant.md: refused at creation, not declined at payment). */
  orders: {
    currencies: CurrencyCode[];
    /** The largest order amount, in major units, the same number in every currency (sandbox.md section 3). */
    maxAmount: string;
  };
  /**
   * Authorisations that lapse (sandbox.md section 11): warned of this long before `capture_before`
   * (AUTH_EXPIRY_WARNING, hours), and what the kit does then, once (AUTH_EXPIRY_POLICY).
   */
  authorizations: { warningMs: number; policy: 'none' | 'capture' | 'void' };
  /** ORDER_TTL (order-ttl.ts): an unpaid order older than this, nothing in flight, is closed; null: never. */
  orderTtlMs: number | null;
  /**
   * What a customer's saved cards may pay in 24 hours with the shopper there (SAVED_CARD_DAILY_PAYMENTS,
   * and SAVED_CARD_DAILY_AMOUNT in major units, per currency); past it, an operator charges.
   */
  savedCards: { dailyPayments: number; dailyAmount: string };
  /** How long SIGTERM waits for requests and jobs in hand before it closes what is left. */
  shutdownGraceMs: number;
  /** A request not complete (headers and body) after this long is answered 408 and its socket closed. */
  httpRequestTimeoutMs: number;
  /**
   * How long after the kit last had the gateway's list of a customer's saved cards it answers
   * `GET /customers/{id}/cards` from its own rows (SAVED_CARDS_SYNC_WINDOW_MS); 0: it asks each time.
   */
  savedCardsSyncWindowMs: number;
  /** Webhook bodies and delivered order events older than this many days are removed (RETENTION_DAYS). */
  retentionDays: number;
  opsApiToken: string;
  /** True when the token was generated for this run and must be shown to the developer. */
  opsApiTokenGenerated: boolean;
  encryptionKey: Buffer;
  encryptionKeyIsDevDefault: boolean;
  /**
   * The keys APP_ENCRYPTION_KEY replaced (APP_ENCRYPTION_KEY_PREVIOUS): what they sealed still opens,
   * and start-up seals it again under the current key (kit/encryption-keys.ts).
   */
  previousEncryptionKeys: Buffer[];
  /**
   * How many proxies in front of the kit to believe (TRUST_PROXY): the client address is the one the
   * outermost of them saw, read from the right of `proxyIpHeader`; 0, the connection's own address.
   */
  trustProxy: number;
  proxyIpHeader: string;
  /** Limits on the public routes (null: off), and the cap on an order's failed payment attempts. */
  limits: CheckoutLimits;
  /** Null: GET /metrics is open (a private network); set, it needs this bearer token. */
  metricsToken: string | null;
  /** A port of its own for GET /metrics, in any role (a worker or scheduler has no API port). */
  metricsPort: number | null;
  roles: Role[];
  /** Schedules that replace the defaults of src/kit/jobs.ts, job by job (JOB_SCHEDULES). */
  jobSchedules: JobSchedules;
  logLevel: string;
  /** auto: readable lines on a terminal in development, JSON lines otherwise (infra/logger.ts). */
  logFormat: 'auto' | 'json' | 'pretty';
}

/** The public routes' limits (docs/api.md, Limits), per client address and per order; null: off. */
export interface CheckoutLimits {
  /** POST /orders, per client address. */
  ordersPerAddress: RateLimit | null;
  /** POST /orders/{id}/pay/card and /pay/redirect, per client address. */
  payPerAddress: RateLimit | null;
  /** The same, per order. */
  payPerOrder: RateLimit | null;
  /** The landings' questions to the gateway, per client address: past it a landing shows the stored order. */
  landingPerAddress: RateLimit | null;
  /** The same, per order. */
  landingPerOrder: RateLimit | null;
  /** GET /payment-methods (the gateway's list, asked each time), per client address. */
  paymentMethodsPerAddress: RateLimit | null;
  /** Wrong tokens at POST /ops/login, per client address: past it 429 until the window ends. */
  loginFailuresPerAddress: RateLimit | null;
  customerTokensPerCredential: RateLimit | null;
  /**
   * Wrong bearer tokens (the API, the queue board, /metrics), per client address: past it a wrong
   * token is a 429 until the window ends; a right one is never refused for them.
   */
  tokenFailuresPerAddress: RateLimit | null;
  /** GET /customers/{id}/cards, per customer (counted once the caller is known to be theirs or an operator). */
  cardListsPerCustomer: RateLimit | null;
  /** The same, per client address (counted before anything else). */
  cardListsPerAddress: RateLimit | null;
  /** Failed payment attempts an order may have before it takes no more (409 TOO_MANY_ATTEMPTS). */
  failedAttemptsPerOrder: number | null;
}

/**
 * The only reader of the environment (merchant.md, Running it). Bad or missing values throw one
 * ConfigError that names every one of them, a line each (config-problems.ts).
 */
export function loadConfig(
  env: NodeJS.ProcessEnv,
  randomToken: () => string,
  reader: Reader = 'kit',
): Config {
  const blankless = Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  );
  const { settings: e, unreadable } = parseEach(envSchema, blankless);
  const production = e.NODE_ENV === 'production';
  const current = e.APP_ENCRYPTION_KEY === undefined ? null : Buffer.from(e.APP_ENCRYPTION_KEY, 'base64');
  const remote =
    e.GATEWAY_BASE_URL !== undefined && e.GATEWAY_BASE_URL !== EMBEDDED ? e.GATEWAY_BASE_URL : null;
  const problems = settingProblems(e, unreadable, {
    reader,
    remoteGateway: remote,
    currentKey: current,
    isDevelopmentKey: current?.equals(DEV_ENCRYPTION_KEY_BYTES) ?? false,
  });
  if (problems.length > 0) throw new ConfigError(problems);
  const opsApiToken = e.OPS_API_TOKEN ?? randomToken();
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? null,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    gateway: {
      baseUrl: remote?.replace(/\/+$/, '') ?? null,
      apiKey: e.GATEWAY_API_KEY ?? SANDBOX_MERCHANT_KEY,
      merchants: configuredMerchants(e.GATEWAY_MERCHANTS, e.GATEWAY_MERCHANT_ID),
      merchantKeys: e.GATEWAY_MERCHANT_KEYS ?? new Map(),
      extraWebhookSecrets: e.GATEWAY_WEBHOOK_SECRETS?.plain ?? [],
      merchantWebhookSecrets: e.GATEWAY_WEBHOOK_SECRETS?.byMerchant ?? new Map(),
      backgroundPerMinute: e.GATEWAY_BACKGROUND_PER_MINUTE,
      keyPerMinute: e.GATEWAY_KEY_PER_MINUTE,
      backgroundReservedPerMinute: e.GATEWAY_BACKGROUND_RESERVED_PER_MINUTE,
      sandboxPort: e.GATEWAY_PORT,
      sandboxHost: e.GATEWAY_HOST,
      sandboxPublicUrl: e.GATEWAY_PUBLIC_URL?.replace(/\/+$/, '') ?? null,
      sandboxSeed: e.GATEWAY_SEED,
      sandboxStateFile: e.GATEWAY_SANDBOX_STATE === 'memory' ? null : e.GATEWAY_SANDBOX_STATE,
    },
    shopUrl: e.SHOP_URL ?? null,
    shopWebhooks: { urls: [...new Set(e.SHOP_WEBHOOK_URLS)], secret: e.SHOP_WEBHOOK_SECRET ?? null },
    orders: { currencies: [...new Set(e.ORDER_CURRENCIES)] as CurrencyCode[], maxAmount: e.ORDER_MAX_AMOUNT },
    authorizations: { warningMs: e.AUTH_EXPIRY_WARNING * 3_600_000, policy: e.AUTH_EXPIRY_POLICY },
    orderTtlMs: e.ORDER_TTL,
    savedCards: { dailyPayments: e.SAVED_CARD_DAILY_PAYMENTS, dailyAmount: e.SAVED_CARD_DAILY_AMOUNT },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    httpRequestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    savedCardsSyncWindowMs: e.SAVED_CARDS_SYNC_WINDOW_MS,
    retentionDays: e.RETENTION_DAYS,
    opsApiToken,
    opsApiTokenGenerated: e.OPS_API_TOKEN === undefined,
    encryptionKey: Buffer.from(e.APP_ENCRYPTION_KEY ?? DEV_ENCRYPTION_KEY, 'base64'),
    encryptionKeyIsDevDefault: e.APP_ENCRYPTION_KEY === undefined,
    previousEncryptionKeys: e.APP_ENCRYPTION_KEY_PREVIOUS.map((k) => Buffer.from(k, 'base64')),
    trustProxy: e.TRUST_PROXY,
    proxyIpHeader: e.PROXY_IP_HEADER,
    limits: {
      ordersPerAddress: e.LIMIT_ORDERS_PER_ADDRESS,
      payPerAddress: e.LIMIT_PAY_PER_ADDRESS,
      payPerOrder: e.LIMIT_PAY_PER_ORDER,
      landingPerAddress: e.LIMIT_LANDING_PER_ADDRESS,
      landingPerOrder: e.LIMIT_LANDING_PER_ORDER,
      paymentMethodsPerAddress: e.LIMIT_PAYMENT_METHODS_PER_ADDRESS,
      loginFailuresPerAddress: e.LIMIT_LOGIN_FAILURES_PER_ADDRESS,
      customerTokensPerCredential: e.LIMIT_CUSTOMER_TOKENS_PER_CREDENTIAL,
      tokenFailuresPerAddress: e.LIMIT_TOKEN_FAILURES_PER_ADDRESS,
      cardListsPerCustomer: e.LIMIT_CARD_LISTS_PER_CUSTOMER,
      cardListsPerAddress: e.LIMIT_CARD_LISTS_PER_ADDRESS,
      failedAttemptsPerOrder: e.MAX_FAILED_ATTEMPTS_PER_ORDER,
    },
    metricsToken: e.METRICS_TOKEN ?? null,
    metricsPort: e.METRICS_PORT ?? null,
    roles: [...new Set(e.ROLES)] as Role[],
    jobSchedules: e.JOB_SCHEDULES,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
  };
}

/**
 * How a process on this machine reaches the kit listening on `host` and `port`: loopback for an
 * address that means every interface, the address itself otherwise.
 */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * The environment with a `.env` file under it, when there is one (config/.env.example lists every
 * variable): a variable set in the environment wins over the file.
 */
export function withDotEnv(env: NodeJS.ProcessEnv, path = '.env'): NodeJS.ProcessEnv {
  if (!existsSync(path)) return env;
  return { ...parseEnv(readFileSync(path, 'utf8')), ...env };
}

/**
 * What the entry points (`npm start`, the CLI, the standalone sandbox) start with: this process's
 * environment over `.env`, and in development a random operator token. Throws a ConfigError.
 */
export function configFromEnvironment(reader: Reader = 'kit'): Config {
  return loadConfig(withDotEnv(process.env), () => randomBytes(24).toString('base64url'), reader);
}
