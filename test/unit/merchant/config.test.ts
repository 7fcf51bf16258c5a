import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import {
  type Config,
  ConfigError,
  envSchema,
  loadConfig,
  localUrl,
  SANDBOX_MERCHANT_KEY,
} from '../../../src/config.js';

/** merchant.md, Running it: configuration is environment variables, validated at start-up. */
describe('merchant: configuration (loadConfig)', () => {
  const GENERATED = 'generated-token-for-this-run-0123';
  const KEY = Buffer.alloc(32, 3).toString('base64');
  const KEY_2 = Buffer.alloc(32, 4).toString('base64');
  const load = (env: Record<string, string | undefined>): Config => loadConfig(env, () => GENERATED);

  /** Every line of the ConfigError loading `env` throws: each one line, none blank, one per variable. */
  const problemsOf = (env: Record<string, string | undefined>): readonly string[] => {
    let caught: unknown;
    try {
      load(env);
    } catch (error) {
      caught = error;
    }
    expect(caught, `${JSON.stringify(env)} should stop start-up`).to.be.instanceOf(ConfigError);
    const { problems, message } = caught as ConfigError;
    expect(message, 'the message is the lines').to.equal(problems.join('\n'));
    for (const line of problems) {
      expect(line.split(/\r?\n/), line).to.have.length(1);
      expect(line, line).to.match(/^[A-Z][A-Z0-9_]*: \S/);
    }
    const names = problems.map((line) => line.slice(0, line.indexOf(':')));
    expect(new Set(names).size, `one line per variable: ${message}`).to.equal(names.length);
    return problems;
  };

  /** The line naming `variable` among those loading `env` throws (others may name other variables). */
  const failure = (env: Record<string, string | undefined>, variable: string): { message: string } => {
    const problems = problemsOf(env);
    const line = problems.find((l) => new RegExp(`^${variable}(?![A-Z_0-9])`).test(l));
    expect(line, `${JSON.stringify(env)}: no line names ${variable}: ${problems.join(' | ')}`).to.be.a(
      'string',
    );
    return { message: line! };
  };

  describe("the defaults of merchant.md's table", () => {
    it('serve a local machine', () => {
      const c = load({});
      expect(c.port).to.equal(3000);
      expect(c.host, 'outside production: this machine only').to.equal('127.0.0.1');
      expect(c.databaseUrl).to.equal('mysql://root@127.0.0.1:3306/merchant');
      expect(c.redisUrl).to.equal('redis://127.0.0.1:6379');
      expect(c.roles).to.deep.equal(['api', 'worker', 'scheduler']);
      expect(c.logLevel).to.equal('info');
      expect(c.gateway.baseUrl, 'unset: the embedded sandbox').to.equal(null);
      expect(c.gateway.apiKey).to.equal(SANDBOX_MERCHANT_KEY);
      expect(SANDBOX_MERCHANT_KEY).to.equal('sk_test_merchant_1001');
      expect(c.gateway.merchants).to.deep.equal([]);
      expect(c.gateway.extraWebhookSecrets).to.deep.equal([]);
      // PUBLIC_BASE_URL: http://127.0.0.1:$PORT, resolved by the kit once the port is bound.
      expect(c.publicBaseUrl === null || c.publicBaseUrl === 'http://127.0.0.1:3000').to.equal(true);
    });

    it('take the values given', () => {
      const c = load({
        PORT: '8080',
        PUBLIC_BASE_URL: 'https://shop.example.com',
        DATABASE_URL: 'mysql://app:pw@db:3306/shop',
        REDIS_URL: 'redis://cache:6379/3',
        GATEWAY_BASE_URL: 'https://gateway.example.com',
        ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT: 'true',
        GATEWAY_API_KEY: 'sk_live_partner_key',
        GATEWAY_MERCHANT_ID: '1001',
        ROLES: 'worker',
        LOG_LEVEL: 'debug',
        OPS_API_TOKEN: 'a-long-enough-ops-token',
        APP_ENCRYPTION_KEY: KEY,
      });
      expect(c.port).to.equal(8080);
      expect(c.publicBaseUrl).to.equal('https://shop.example.com');
      expect(c.databaseUrl).to.equal('mysql://app:pw@db:3306/shop');
      expect(c.redisUrl, 'a database index in the path is honoured').to.equal('redis://cache:6379/3');
      expect(c.gateway.baseUrl).to.equal('https://gateway.example.com');
      expect(c.gateway.apiKey).to.equal('sk_live_partner_key');
      expect(c.gateway.merchants, 'GATEWAY_MERCHANT_ID: a list of one').to.deep.equal([1001]);
      expect(c.roles).to.deep.equal(['worker']);
      expect(c.logLevel).to.equal('debug');
      expect(c.opsApiToken).to.equal('a-long-enough-ops-token');
      expect(c.opsApiTokenGenerated).to.equal(false);
      expect(c.encryptionKey.equals(Buffer.from(KEY, 'base64'))).to.equal(true);
      expect(c.encryptionKeyIsDevDefault).to.equal(false);
    });

    it('AUTH_EXPIRY_WARNING is hours (default 48), AUTH_EXPIRY_POLICY none, capture or void (default none)', () => {
      expect(load({}).authorizations).to.deep.equal({ warningMs: 48 * 3_600_000, policy: 'none' });
      expect(load({ AUTH_EXPIRY_WARNING: '12', AUTH_EXPIRY_POLICY: 'void' }).authorizations).to.deep.equal({
        warningMs: 12 * 3_600_000,
        policy: 'void',
      });
    });

    it('ORDER_TTL is a duration (default 24h), or off', () => {
      expect(load({}).orderTtlMs).to.equal(24 * 3_600_000);
      expect(load({ ORDER_TTL: '7d' }).orderTtlMs).to.equal(7 * 24 * 3_600_000);
      expect(load({ ORDER_TTL: '1h30m' }).orderTtlMs).to.equal(5_400_000);
      expect(load({ ORDER_TTL: 'off' }).orderTtlMs).to.equal(null);
    });

    it('saved cards pay at most 5 times and 500.00 a day with the shopper there; an amount a currency cannot hold is refused', () => {
      expect(load({}).savedCards).to.deep.equal({ dailyPayments: 5, dailyAmount: '500.00' });
      expect(
        load({ SAVED_CARD_DAILY_PAYMENTS: '2', SAVED_CARD_DAILY_AMOUNT: '80' }).savedCards,
      ).to.deep.equal({
        dailyPayments: 2,
        dailyAmount: '80',
      });
      for (const bad of [{ SAVED_CARD_DAILY_PAYMENTS: '0' }, { SAVED_CARD_DAILY_AMOUNT: '-1' }])
        expect(() => load(bad), JSON.stringify(bad)).to.throw(/SAVED_CARD_DAILY_/);
      expect(() => load({ SAVED_CARD_DAILY_AMOUNT: '10.50' })).to.throw(
        /SAVED_CARD_DAILY_AMOUNT: has more decimals than JPY/,
      );
    });

    it('the limits on the public routes (docs/api.md, Limits): defaults, a count per period, off', () => {
      expect(load({}).limits).to.deep.equal({
        ordersPerAddress: { count: 60, seconds: 60 },
        payPerAddress: { count: 60, seconds: 60 },
        payPerOrder: { count: 10, seconds: 600 },
        landingPerAddress: { count: 120, seconds: 60 },
        landingPerOrder: { count: 20, seconds: 60 },
        paymentMethodsPerAddress: { count: 120, seconds: 60 },
        loginFailuresPerAddress: { count: 5, seconds: 900 },
        customerTokensPerCredential: { count: 120, seconds: 60 },
        tokenFailuresPerAddress: { count: 10, seconds: 900 },
        cardListsPerCustomer: { count: 30, seconds: 60 },
        cardListsPerAddress: { count: 60, seconds: 60 },
        failedAttemptsPerOrder: 5,
      });
      const c = load({
        LIMIT_ORDERS_PER_ADDRESS: '5/30s',
        LIMIT_PAY_PER_ADDRESS: '100/h',
        LIMIT_PAY_PER_ORDER: 'off',
        LIMIT_LANDING_PER_ADDRESS: '1/24h',
        LIMIT_LANDING_PER_ORDER: '7/2m',
        LIMIT_PAYMENT_METHODS_PER_ADDRESS: '9/1s',
        LIMIT_LOGIN_FAILURES_PER_ADDRESS: '3/1h',
        LIMIT_CUSTOMER_TOKENS_PER_CREDENTIAL: '30/1m',
        LIMIT_TOKEN_FAILURES_PER_ADDRESS: '20/5m',
        LIMIT_CARD_LISTS_PER_CUSTOMER: '4/10s',
        LIMIT_CARD_LISTS_PER_ADDRESS: 'off',
        MAX_FAILED_ATTEMPTS_PER_ORDER: 'off',
      }).limits;
      expect(c).to.deep.equal({
        ordersPerAddress: { count: 5, seconds: 30 },
        payPerAddress: { count: 100, seconds: 3600 },
        payPerOrder: null,
        landingPerAddress: { count: 1, seconds: 86_400 },
        landingPerOrder: { count: 7, seconds: 120 },
        paymentMethodsPerAddress: { count: 9, seconds: 1 },
        loginFailuresPerAddress: { count: 3, seconds: 3600 },
        customerTokensPerCredential: { count: 30, seconds: 60 },
        tokenFailuresPerAddress: { count: 20, seconds: 300 },
        cardListsPerCustomer: { count: 4, seconds: 10 },
        cardListsPerAddress: null,
        failedAttemptsPerOrder: null,
      });
      expect(load({ MAX_FAILED_ATTEMPTS_PER_ORDER: '3' }).limits.failedAttemptsPerOrder).to.equal(3);
      // How long a customer's cards are answered from the kit's rows after a gateway list.
      expect(load({}).savedCardsSyncWindowMs).to.equal(30_000);
      expect(load({ SAVED_CARDS_SYNC_WINDOW_MS: '0' }).savedCardsSyncWindowMs).to.equal(0);
    });

    it('RETENTION_DAYS: whole days from 1 to 3650, 90 by default; anything else one line naming it', () => {
      expect(load({}).retentionDays).to.equal(90);
      expect(load({ RETENTION_DAYS: '7' }).retentionDays).to.equal(7);
      expect(load({ RETENTION_DAYS: '3650' }).retentionDays).to.equal(3650);
      for (const bad of ['0', '3651', '-1', '7.5', '90d', 'off', ' 9'])
        expect(failure({ RETENTION_DAYS: bad }, 'RETENTION_DAYS').message).to.equal(
          'RETENTION_DAYS: must be a whole number of days from 1 to 3650: webhook bodies and delivered order events older than that are removed',
        );
    });

    it('TRUST_PROXY is a count of proxies (default 0, true 1, false 0), PROXY_IP_HEADER a header name', () => {
      expect(load({}).trustProxy).to.equal(0);
      expect(load({}).proxyIpHeader).to.equal('X-Forwarded-For');
      expect(load({ TRUST_PROXY: 'true' }).trustProxy).to.equal(1);
      expect(load({ TRUST_PROXY: 'false' }).trustProxy).to.equal(0);
      expect(load({ TRUST_PROXY: '2', PROXY_IP_HEADER: 'X-Real-IP' })).to.deep.include({
        trustProxy: 2,
        proxyIpHeader: 'X-Real-IP',
      });
    });

    it("the gateway budget's shares: 900 calls a minute in all, 100 of them kept for background work", () => {
      expect(load({}).gateway).to.deep.include({
        backgroundPerMinute: 400,
        keyPerMinute: 900,
        backgroundReservedPerMinute: 100,
      });
      expect(
        load({
          GATEWAY_KEY_PER_MINUTE: '1000',
          GATEWAY_BACKGROUND_PER_MINUTE: '300',
          GATEWAY_BACKGROUND_RESERVED_PER_MINUTE: '0',
        }).gateway,
      ).to.deep.include({ backgroundPerMinute: 300, keyPerMinute: 1000, backgroundReservedPerMinute: 0 });
    });

    it('ROLES lists any of api, worker, scheduler, spaces trimmed', () => {
      expect(load({ ROLES: 'api' }).roles).to.deep.equal(['api']);
      expect(load({ ROLES: ' scheduler , api ' }).roles).to.have.members(['scheduler', 'api']);
    });

    it('JOB_SCHEDULES replaces the schedules it names, off turns a job off; unset, none is replaced', () => {
      expect(load({}).jobSchedules).to.deep.equal({});
      expect(
        load({ JOB_SCHEDULES: 'poller=*/2 * * * * *; recovery = 0,30 * * * * * ;report=off;' }).jobSchedules,
      ).to.deep.equal({ poller: '*/2 * * * * *', recovery: '0,30 * * * * *', report: null });
    });

    it('PORT 0 (any free port) and 65535 are ports', () => {
      expect(load({ PORT: '0' }).port).to.equal(0);
      expect(load({ PORT: '65535' }).port).to.equal(65535);
    });
  });

  describe('a bad value stops start-up with one line starting with its name', () => {
    const cases: [string, Record<string, string>][] = [
      ['PORT', { PORT: 'abc' }],
      ['PORT', { PORT: '70000' }],
      ['PORT', { PORT: '-1' }],
      ['PORT', { PORT: '80.5' }],
      ['DATABASE_URL', { DATABASE_URL: 'http://x' }],
      ['DATABASE_URL', { DATABASE_URL: 'not a url' }],
      ['DATABASE_URL', { DATABASE_URL: 'mysql://root@db:3306/a-shop' }],
      ['DATABASE_URL', { DATABASE_URL: 'mysql://root@db:3306/' }],
      ['REDIS_URL', { REDIS_URL: 'mysql://x' }],
      ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://shop.example.com' }],
      ['GATEWAY_BASE_URL', { GATEWAY_BASE_URL: 'notaurl', GATEWAY_API_KEY: 'sk_test_merchant_1001' }],
      ['GATEWAY_BASE_URL', { GATEWAY_BASE_URL: 'notaurl' }],
      ['GATEWAY_MERCHANT_ID', { GATEWAY_MERCHANT_ID: 'x' }],
      ['APP_ENCRYPTION_KEY', { APP_ENCRYPTION_KEY: Buffer.alloc(16, 1).toString('base64') }],
      ['APP_ENCRYPTION_KEY', { APP_ENCRYPTION_KEY: Buffer.alloc(33, 1).toString('base64') }],
      ['APP_ENCRYPTION_KEY', { APP_ENCRYPTION_KEY: 'not base64 at all!' }],
      ['ROLES', { ROLES: 'api,bogus' }],
      ['ROLES', { ROLES: ',' }],
      ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
      ['OPS_API_TOKEN', { OPS_API_TOKEN: 'short' }],
      ['GATEWAY_BACKGROUND_PER_MINUTE', { GATEWAY_BACKGROUND_PER_MINUTE: '500' }],
      ['REDIS_PREFIX', { REDIS_PREFIX: 'a kit' }],
      ['AUTH_EXPIRY_POLICY', { AUTH_EXPIRY_POLICY: 'later' }],
      ['AUTH_EXPIRY_WARNING', { AUTH_EXPIRY_WARNING: '0' }],
      ['AUTH_EXPIRY_WARNING', { AUTH_EXPIRY_WARNING: '1.5' }],
      ['ORDER_TTL', { ORDER_TTL: '24' }],
      ['ORDER_TTL', { ORDER_TTL: 'never' }],
      ['ORDER_TTL', { ORDER_TTL: '10s' }],
      ['METRICS_TOKEN', { METRICS_TOKEN: 'short' }],
      ['METRICS_PORT', { METRICS_PORT: '70000' }],
      ['GATEWAY_BACKGROUND_PER_MINUTE', { GATEWAY_BACKGROUND_PER_MINUTE: '0' }],
      ['GATEWAY_BACKGROUND_PER_MINUTE', { GATEWAY_BACKGROUND_PER_MINUTE: 'many' }],
      ['OPS_API_TOKEN', { OPS_API_TOKEN: '123456789012345' }],
      ['GATEWAY_HOST', { GATEWAY_HOST: 'every-interface' }],
      ['GATEWAY_HOST', { GATEWAY_HOST: '0.0.0.0:4010' }],
      ['GATEWAY_HOST', { GATEWAY_HOST: '300.1.1.1' }],
      ['GATEWAY_PUBLIC_URL', { GATEWAY_PUBLIC_URL: 'localhost:4010' }],
      ['JOB_SCHEDULES', { JOB_SCHEDULES: 'polling=*/2 * * * * *' }],
      ['JOB_SCHEDULES', { JOB_SCHEDULES: 'poller=every second' }],
      ['JOB_SCHEDULES', { JOB_SCHEDULES: 'poller' }],
      ['JOB_SCHEDULES', { JOB_SCHEDULES: 'poller=*/2 * * * * *,recovery=off' }],
      ['LIMIT_ORDERS_PER_ADDRESS', { LIMIT_ORDERS_PER_ADDRESS: '30' }],
      ['LIMIT_ORDERS_PER_ADDRESS', { LIMIT_ORDERS_PER_ADDRESS: '0/1m' }],
      ['LIMIT_PAY_PER_ADDRESS', { LIMIT_PAY_PER_ADDRESS: '30 per minute' }],
      ['LIMIT_PAY_PER_ORDER', { LIMIT_PAY_PER_ORDER: '10/0m' }],
      ['LIMIT_PAY_PER_ORDER', { LIMIT_PAY_PER_ORDER: '10/2d' }],
      ['LIMIT_LANDING_PER_ADDRESS', { LIMIT_LANDING_PER_ADDRESS: '10/25h' }],
      ['LIMIT_LANDING_PER_ORDER', { LIMIT_LANDING_PER_ORDER: '-1/1m' }],
      ['LIMIT_PAYMENT_METHODS_PER_ADDRESS', { LIMIT_PAYMENT_METHODS_PER_ADDRESS: 'none' }],
      ['MAX_FAILED_ATTEMPTS_PER_ORDER', { MAX_FAILED_ATTEMPTS_PER_ORDER: '0' }],
      ['MAX_FAILED_ATTEMPTS_PER_ORDER', { MAX_FAILED_ATTEMPTS_PER_ORDER: 'five' }],
      ['TRUST_PROXY', { TRUST_PROXY: 'yes' }],
      ['TRUST_PROXY', { TRUST_PROXY: '11' }],
      ['TRUST_PROXY', { TRUST_PROXY: '-1' }],
      ['PROXY_IP_HEADER', { PROXY_IP_HEADER: 'X Forwarded For' }],
      ['GATEWAY_KEY_PER_MINUTE', { GATEWAY_KEY_PER_MINUTE: '1001' }],
      ['GATEWAY_KEY_PER_MINUTE', { GATEWAY_KEY_PER_MINUTE: 'lots' }],
      ['GATEWAY_BACKGROUND_RESERVED_PER_MINUTE', { GATEWAY_BACKGROUND_RESERVED_PER_MINUTE: 'some' }],
      ['GATEWAY_BACKGROUND_RESERVED_PER_MINUTE', { GATEWAY_BACKGROUND_RESERVED_PER_MINUTE: '401' }],
      ['GATEWAY_BACKGROUND_PER_MINUTE', { GATEWAY_KEY_PER_MINUTE: '400' }],
      [
        'APP_ENCRYPTION_KEY_PREVIOUS',
        {
          APP_ENCRYPTION_KEY: KEY,
          APP_ENCRYPTION_KEY_PREVIOUS: `${KEY_2},${Buffer.alloc(31, 1).toString('base64')}`,
        },
      ],
      ['APP_ENCRYPTION_KEY_PREVIOUS', { APP_ENCRYPTION_KEY: KEY, APP_ENCRYPTION_KEY_PREVIOUS: 'old-key' }],
      [
        'APP_ENCRYPTION_KEY_PREVIOUS',
        { APP_ENCRYPTION_KEY: KEY, APP_ENCRYPTION_KEY_PREVIOUS: `${KEY_2},${KEY}` },
      ],
      ['APP_ENCRYPTION_KEY_PREVIOUS', { APP_ENCRYPTION_KEY_PREVIOUS: KEY_2 }],
    ];
    for (const [variable, env] of cases) {
      const given = Object.entries(env)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(' ');
      it(`${given} names ${variable}`, () => {
        failure(env, variable);
      });
    }

    it('APP_ENCRYPTION_KEY_PREVIOUS: the keys the current one replaced, in the order given; none by default', () => {
      expect(load({ APP_ENCRYPTION_KEY: KEY }).previousEncryptionKeys).to.deep.equal([]);
      const c = load({
        APP_ENCRYPTION_KEY: KEY,
        APP_ENCRYPTION_KEY_PREVIOUS: ` ${KEY_2} , ${Buffer.alloc(32, 5).toString('base64')}`,
      });
      expect(c.previousEncryptionKeys).to.deep.equal([Buffer.alloc(32, 4), Buffer.alloc(32, 5)]);
      expect(c.encryptionKey).to.deep.equal(Buffer.alloc(32, 3));
    });

    it('GATEWAY_BASE_URL=embedded is the sandbox in development too, and needs no key', () => {
      expect(load({ GATEWAY_BASE_URL: 'embedded' }).gateway.baseUrl).to.equal(null);
    });

    it('GATEWAY_BASE_URL neither a URL nor embedded is refused with both choices named', () => {
      expect(() => load({ GATEWAY_BASE_URL: 'sandbox' })).to.throw(
        ConfigError,
        /^GATEWAY_BASE_URL: .*embedded/,
      );
    });

    it('GATEWAY_BASE_URL set without GATEWAY_API_KEY names GATEWAY_API_KEY', () => {
      failure({ GATEWAY_BASE_URL: 'https://gateway.example.com' }, 'GATEWAY_API_KEY');
    });

    it('three bad values: each named on a line of its own, in one error', () => {
      const problems = problemsOf({ PORT: 'abc', LOG_LEVEL: 'loud', ROLES: 'nope' });
      expect(problems).to.have.length(3);
      expect(problems).to.include('PORT: must be a port number from 0 to 65535');
      expect(problems).to.include('ROLES: must list some of api, worker, scheduler');
      expect(problems.find((l) => l.startsWith('LOG_LEVEL: '))).to.contain('"info"');
    });
  });

  describe('production', () => {
    const production = {
      NODE_ENV: 'production',
      OPS_API_TOKEN: 'a-long-enough-ops-token-0123456789',
      APP_ENCRYPTION_KEY: KEY,
      METRICS_TOKEN: 'a-metrics-token-0123456789',
      GATEWAY_BASE_URL: 'https://gateway.example.com',
      GATEWAY_API_KEY: 'sk_live_merchant_1001',
    };

    const names = (lines: readonly string[]) => lines.map((l) => l.slice(0, l.indexOf(':')));

    it('lists every bad setting at once: values that do not parse, a missing secret, the guards, settings that contradict', () => {
      const problems = problemsOf({
        ...production,
        PORT: 'abc',
        DATABASE_URL: 'x',
        APP_ENCRYPTION_KEY: undefined,
        OPS_API_TOKEN: 'x'.repeat(40),
        METRICS_TOKEN: undefined,
        GATEWAY_BACKGROUND_PER_MINUTE: '300',
        GATEWAY_KEY_PER_MINUTE: '200',
      });
      expect(names(problems)).to.deep.equal([
        'PORT',
        'DATABASE_URL',
        'APP_ENCRYPTION_KEY',
        'OPS_API_TOKEN',
        'METRICS_TOKEN',
        'GATEWAY_BACKGROUND_PER_MINUTE',
      ]);
      expect(problems[2]).to.equal('APP_ENCRYPTION_KEY: is required in production (32 bytes, base64)');
      expect(problems[3]).to.contain('at least 16 different characters');
      expect(problems[5]).to.contain('must be below GATEWAY_KEY_PER_MINUTE (200)');
    });

    it('names a variable once, by its first problem: a missing token is missing, not also short', () => {
      expect(problemsOf({ ...production, OPS_API_TOKEN: undefined })).to.deep.equal([
        'OPS_API_TOKEN: is required in production',
      ]);
    });

    it('runs no check over a value that did not parse: its own line says what is wrong', () => {
      // The guard on /metrics cannot tell whether METRICS_PORT serves it apart: it says nothing.
      expect(problemsOf({ ...production, METRICS_TOKEN: undefined, METRICS_PORT: 'abc' })).to.deep.equal([
        'METRICS_PORT: must be a port number from 0 to 65535',
      ]);
      // Neither production's rules nor development's judge a NODE_ENV that is neither.
      expect(
        names(problemsOf({ NODE_ENV: 'prod', GATEWAY_BASE_URL: 'https://gateway.example.com' })),
      ).to.deep.equal(['NODE_ENV', 'GATEWAY_API_KEY']);
      expect(names(problemsOf({ ORDER_CURRENCIES: 'EUR,XXX', ORDER_MAX_AMOUNT: '10.5' }))).to.deep.equal([
        'ORDER_CURRENCIES',
      ]);
      expect(problemsOf({ ORDER_MAX_AMOUNT: '10.5', SAVED_CARD_DAILY_AMOUNT: '1.25' })).to.deep.equal([
        'ORDER_MAX_AMOUNT: has more decimals than JPY allows',
        'SAVED_CARD_DAILY_AMOUNT: has more decimals than JPY allows',
      ]);
    });

    it('refuses to start without a gateway: no silent sandbox taking "payments" in production', () => {
      failure({ ...production, GATEWAY_BASE_URL: undefined }, 'GATEWAY_BASE_URL');
      failure({ ...production, GATEWAY_BASE_URL: '' }, 'GATEWAY_BASE_URL');
    });

    it('runs the built-in sandbox when told so explicitly: GATEWAY_BASE_URL=embedded', () => {
      const c = load({ ...production, GATEWAY_BASE_URL: 'embedded', GATEWAY_API_KEY: undefined });
      expect(c.gateway.baseUrl).to.equal(null);
      expect(c.gateway.apiKey).to.equal('sk_test_merchant_1001');
    });

    it('the standalone sandbox reads its own settings: no gateway, no operator token needed', () => {
      const c = loadConfig({ NODE_ENV: 'production', APP_ENCRYPTION_KEY: KEY }, () => GENERATED, 'sandbox');
      expect(c.env).to.equal('production');
      expect(() => loadConfig({ NODE_ENV: 'production' }, () => GENERATED, 'sandbox')).to.throw(
        ConfigError,
        /^APP_ENCRYPTION_KEY: /,
      );
    });

    it('HOST: the kit listens on 0.0.0.0 in production (a container), on 127.0.0.1 elsewhere, unless it says otherwise', () => {
      expect(load(production).host).to.equal('0.0.0.0');
      expect(load({ ...production, HOST: '10.0.0.5' }).host).to.equal('10.0.0.5');
      expect(load({}).host).to.equal('127.0.0.1');
      expect(load({ NODE_ENV: 'test' }).host).to.equal('127.0.0.1');
      expect(load({ HOST: '0.0.0.0' }).host, 'on purpose').to.equal('0.0.0.0');
      expect(load({ HOST: '::' }).host).to.equal('::');
      expect(failure({ HOST: 'localhost' }, 'HOST').message).to.contain('must be an IP address');
      expect(localUrl('0.0.0.0', 3000)).to.equal('http://127.0.0.1:3000');
      expect(localUrl('::', 3000)).to.equal('http://127.0.0.1:3000');
      expect(localUrl('::1', 3000)).to.equal('http://[::1]:3000');
      expect(localUrl('10.0.0.5', 8080)).to.equal('http://10.0.0.5:8080');
    });

    it('the standalone sandbox listens on 127.0.0.1 unless GATEWAY_HOST says otherwise (0.0.0.0 in a container)', () => {
      const read = (env: Record<string, string>) =>
        loadConfig({ NODE_ENV: 'production', APP_ENCRYPTION_KEY: KEY, ...env }, () => GENERATED, 'sandbox');
      expect(read({}).gateway.sandboxHost).to.equal('127.0.0.1');
      expect(read({ GATEWAY_HOST: '' }).gateway.sandboxHost, 'empty is unset').to.equal('127.0.0.1');
      expect(read({ GATEWAY_HOST: '0.0.0.0' }).gateway.sandboxHost).to.equal('0.0.0.0');
      expect(read({ GATEWAY_HOST: '::' }).gateway.sandboxHost).to.equal('::');
      expect(read({}).gateway.sandboxPublicUrl, 'unset: the origin of each request').to.equal(null);
      expect(
        read({ GATEWAY_PUBLIC_URL: 'http://localhost:4010/' }).gateway.sandboxPublicUrl,
        'the trailing slash dropped',
      ).to.equal('http://localhost:4010');
    });

    it('starts with both secrets given, and generates nothing', () => {
      const c = load(production);
      expect(c.env).to.equal('production');
      expect(c.opsApiToken).to.equal('a-long-enough-ops-token-0123456789');
      expect(c.opsApiTokenGenerated).to.equal(false);
      expect(c.encryptionKeyIsDevDefault).to.equal(false);
    });

    it('refuses to start without APP_ENCRYPTION_KEY', () => {
      failure({ ...production, APP_ENCRYPTION_KEY: undefined }, 'APP_ENCRYPTION_KEY');
    });

    it('refuses to start without OPS_API_TOKEN', () => {
      failure({ ...production, OPS_API_TOKEN: undefined }, 'OPS_API_TOKEN');
    });

    it('refuses the development key given explicitly: it is in the source for anyone to read', () => {
      const dev = load({}).encryptionKey.toString('base64');
      expect(failure({ ...production, APP_ENCRYPTION_KEY: dev }, 'APP_ENCRYPTION_KEY').message).to.contain(
        'is the development key',
      );
    });

    it('refuses the development key by its bytes: written without its padding, or with other unused bits, it is the same key', () => {
      const dev = load({}).encryptionKey.toString('base64');
      expect(dev.endsWith('=')).to.equal(true);
      const unpadded = dev.replace(/=+$/, '');
      // The last character's two low bits are no part of the key: "c" and "d" decode alike here.
      const otherBits = `${dev.slice(0, -2)}${dev.at(-2) === 'c' ? 'd' : 'c'}=`;
      expect(Buffer.from(otherBits, 'base64').equals(Buffer.from(dev, 'base64'))).to.equal(true);
      for (const written of [unpadded, otherBits])
        expect(
          failure({ ...production, APP_ENCRYPTION_KEY: written }, 'APP_ENCRYPTION_KEY').message,
          written,
        ).to.contain('is the development key');
      // Among the keys replaced too, one key is one key however it is written.
      expect(
        failure(
          { ...production, APP_ENCRYPTION_KEY: KEY, APP_ENCRYPTION_KEY_PREVIOUS: KEY.replace(/=+$/, '') },
          'APP_ENCRYPTION_KEY_PREVIOUS',
        ).message,
      ).to.contain('lists APP_ENCRYPTION_KEY itself');
    });

    it('refuses an OPS_API_TOKEN of fewer than 16 different characters: 32 times one character is no secret', () => {
      for (const weak of ['x'.repeat(32), 'ab'.repeat(20), '0123456789abcde'.repeat(3)])
        expect(failure({ ...production, OPS_API_TOKEN: weak }, 'OPS_API_TOKEN').message, weak).to.contain(
          'at least 16 different characters',
        );
      const sixteen = '0123456789abcdef'.repeat(2);
      expect(load({ ...production, OPS_API_TOKEN: sixteen }).opsApiToken).to.equal(sixteen);
    });

    it('refuses an OPS_API_TOKEN shorter than 32 characters or a placeholder from the documentation', () => {
      expect(failure({ ...production, OPS_API_TOKEN: 'x'.repeat(31) }, 'OPS_API_TOKEN').message).to.contain(
        'at least 32 characters',
      );
      const random32 = 'q7Ve2Lm9Xc4RtB8zKw1Hn6Sd3Jf5Gp0Y';
      expect(load({ ...production, OPS_API_TOKEN: random32 }).opsApiToken).to.equal(random32);
      for (const placeholder of [
        'change-me-to-a-long-random-token',
        'local-ops-token-0123456789',
        'please-CHANGE-ME-before-going-live-0123',
      ])
        expect(failure({ ...production, OPS_API_TOKEN: placeholder }, 'OPS_API_TOKEN').message).to.contain(
          'placeholder',
        );
    });

    it('refuses /metrics open on the public port: METRICS_TOKEN, or METRICS_PORT to serve it apart', () => {
      expect(failure({ ...production, METRICS_TOKEN: undefined }, 'METRICS_TOKEN').message).to.contain(
        'METRICS_PORT',
      );
      expect(load({ ...production, METRICS_TOKEN: undefined, METRICS_PORT: '9464' }).metricsPort).to.equal(
        9464,
      );
      // A worker or a scheduler serves no public port.
      expect(
        load({ ...production, METRICS_TOKEN: undefined, ROLES: 'worker,scheduler' }).metricsToken,
      ).to.equal(null);
    });
  });

  describe('development', () => {
    it('uses a generated OPS_API_TOKEN and flags it, so it is printed', () => {
      const c = load({});
      expect(c.opsApiToken).to.equal(GENERATED);
      expect(c.opsApiTokenGenerated).to.equal(true);
    });

    it('refuses a gateway off this machine unless ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT says it is meant', () => {
      const remote = {
        GATEWAY_BASE_URL: 'https://gateway.example.com',
        GATEWAY_API_KEY: 'sk_live_0123456789',
      };
      expect(failure(remote, 'GATEWAY_BASE_URL').message).to.contain('NODE_ENV=production');
      failure({ ...remote, NODE_ENV: 'test' }, 'GATEWAY_BASE_URL');
      failure({ ...remote, GATEWAY_BASE_URL: 'http://10.0.0.5:4010' }, 'GATEWAY_BASE_URL');
      failure(
        { ...remote, ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT: 'yes' },
        'ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT',
      );
      expect(load({ ...remote, ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT: 'true' }).gateway.baseUrl).to.equal(
        'https://gateway.example.com',
      );
      // A sandbox on this machine (npm run gateway), by any loopback name.
      for (const local of [
        'http://127.0.0.1:4010',
        'http://localhost:4010',
        'http://[::1]:4010',
        'http://127.1.2.3',
      ])
        expect(load({ ...remote, GATEWAY_BASE_URL: local }).gateway.baseUrl, local).to.equal(local);
    });

    it('uses a fixed 32-byte encryption key and flags it, so a warning is given', () => {
      const a = load({});
      const b = load({ NODE_ENV: 'development' });
      expect(a.encryptionKey).to.have.length(32);
      expect(a.encryptionKeyIsDevDefault).to.equal(true);
      expect(a.encryptionKey.equals(b.encryptionKey), 'fixed: the same on every start').to.equal(true);
    });
  });

  describe('GATEWAY_WEBHOOK_SECRETS', () => {
    it('is comma-separated with spaces trimmed', () => {
      const c = load({
        GATEWAY_WEBHOOK_SECRETS: ' whsec_first_secret_0123456789 ,whsec_second_secret_0123456789 ',
      });
      expect(c.gateway.extraWebhookSecrets).to.deep.equal([
        'whsec_first_secret_0123456789',
        'whsec_second_secret_0123456789',
      ]);
    });

    it('one secret alone is a list of one', () => {
      expect(
        load({ GATEWAY_WEBHOOK_SECRETS: 'whsec_only_secret_0123456789' }).gateway.extraWebhookSecrets,
      ).to.deep.equal(['whsec_only_secret_0123456789']);
    });
  });

  describe('empty strings count as unset', () => {
    it('every variable empty gives the defaults', () => {
      const names = [
        'NODE_ENV',
        'PORT',
        'PUBLIC_BASE_URL',
        'DATABASE_URL',
        'REDIS_URL',
        'GATEWAY_BASE_URL',
        'GATEWAY_API_KEY',
        'GATEWAY_MERCHANT_ID',
        'GATEWAY_WEBHOOK_SECRETS',
        'OPS_API_TOKEN',
        'APP_ENCRYPTION_KEY',
        'ROLES',
        'LOG_LEVEL',
      ];
      const c = load(Object.fromEntries(names.map((n) => [n, ''])));
      expect(c).to.deep.equal(load({}));
      expect(c.port).to.equal(3000);
      expect(c.gateway.baseUrl).to.equal(null);
      expect(c.opsApiTokenGenerated).to.equal(true);
    });

    it('an empty required secret in production is missing', () => {
      failure({ NODE_ENV: 'production', APP_ENCRYPTION_KEY: KEY, OPS_API_TOKEN: '' }, 'OPS_API_TOKEN');
      failure(
        { NODE_ENV: 'production', APP_ENCRYPTION_KEY: '', OPS_API_TOKEN: 'a-long-enough-ops-token' },
        'APP_ENCRYPTION_KEY',
      );
    });

    it('an empty GATEWAY_API_KEY with GATEWAY_BASE_URL is missing', () => {
      failure({ GATEWAY_BASE_URL: 'https://gateway.example.com', GATEWAY_API_KEY: '' }, 'GATEWAY_API_KEY');
    });
  });

  it('config/.env.example names every variable the kit reads, set or commented out', () => {
    const example = readFileSync(new URL('../../../config/.env.example', import.meta.url), 'utf8');
    const named = new Set([...example.matchAll(/^(?:# ?)?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    expect(Object.keys(envSchema.shape).filter((name) => !named.has(name))).to.deep.equal([]);
  });
});
