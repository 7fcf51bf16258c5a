import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { type Config, loadConfig, type Reader } from '../../../src/config.js';

/**
 * docker-compose.yml, read as compose reads it (YAML with merge keys, `${VAR:-default}` and
 * `${VAR:?message}` interpolation), since no Docker engine runs where this is developed: the roles
 * split into services, the sandbox as a service of its own, the one-shots, and every kit service's
 * environment accepted by the kit's own configuration.
 */

/** A file of the repository. */
const at = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const read = (path: string) => readFileSync(at(path), 'utf8');

interface Service {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  volumes?: string[];
  deploy?: { replicas?: number };
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { disable?: boolean; test?: string[] };
  restart?: string;
}

const compose = load(read('docker-compose.yml'), {
  schema: CORE_SCHEMA.withTags(mergeTag),
}) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;
const KEY = Buffer.alloc(32, 5).toString('base64');
const TOKEN = 'compose-ops-token-0123456789abcdefgh';

/** Compose's interpolation of one value, with `given` as the shell's environment. */
function interpolate(value: string, given: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?:(:?[-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const set = given[name];
    if (set !== undefined && set !== '') return set;
    if (op?.endsWith('?')) throw new Error(`${name}: ${arg}`);
    return op?.endsWith('-') ? (arg ?? '') : '';
  });
}

/** A service's environment as its container sees it, with the key and the token given to compose. */
function environmentOf(
  name: string,
  given: Record<string, string> = { APP_ENCRYPTION_KEY: KEY, OPS_API_TOKEN: TOKEN },
) {
  const env = services[name]?.environment ?? {};
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v), given)]));
}

const configOf = (name: string, reader: Reader = 'kit'): Config =>
  loadConfig(environmentOf(name), () => 'generated-token-never-used', reader);

const KIT_SERVICES = ['api', 'worker', 'scheduler', 'migrate', 'register'];

describe('docker-compose.yml: the kit split by role (no Docker engine here: read as compose reads it)', () => {
  it('has the roles, the one-shots, the sandbox, MySQL and Redis as services', () => {
    expect(Object.keys(services)).to.have.members([...KIT_SERVICES, 'sandbox', 'mysql', 'redis']);
  });

  it('every kit service and the sandbox run the one image built from the Dockerfile', () => {
    for (const name of [...KIT_SERVICES, 'sandbox']) {
      expect(services[name]!.build, name).to.equal('.');
      expect(services[name]!.image, name).to.equal(services.api!.image);
    }
  });

  it('api, worker and scheduler run one role each, with the image command (node dist/src/main.js)', () => {
    expect(configOf('api').roles).to.deep.equal(['api']);
    expect(configOf('worker').roles).to.deep.equal(['worker']);
    expect(configOf('scheduler').roles).to.deep.equal(['scheduler']);
    for (const name of ['api', 'worker', 'scheduler'])
      expect(services[name]!.command, `${name}: the Dockerfile's CMD`).to.equal(undefined);
  });

  it('the api runs 2 replicas and binds no fixed host port: a range, one port each', () => {
    expect(services.api!.deploy?.replicas).to.equal(2);
    const ports = (services.api!.ports ?? []).map((p) => interpolate(p, {}));
    expect(ports).to.deep.equal(['3000-3001:3000']);
    expect(interpolate(services.api!.ports![0]!, { API_PORTS: '3000-3003' })).to.equal('3000-3003:3000');
  });

  it('every kit service has the production settings, and the same encryption key and token', () => {
    const required = [
      'NODE_ENV',
      'OPS_API_TOKEN',
      'APP_ENCRYPTION_KEY',
      'DATABASE_URL',
      'REDIS_URL',
      'GATEWAY_BASE_URL',
      'GATEWAY_API_KEY',
      'PUBLIC_BASE_URL',
    ];
    for (const name of KIT_SERVICES) {
      const env = environmentOf(name);
      expect(Object.keys(env), name).to.include.members(required);
      const c = configOf(name); // throws a ConfigError naming the variable if one is refused
      expect(c.env, name).to.equal('production');
      expect(c.encryptionKey.equals(Buffer.from(KEY, 'base64')), name).to.equal(true);
      expect(c.encryptionKeyIsDevDefault, name).to.equal(false);
      expect(c.opsApiToken, name).to.equal(configOf('api').opsApiToken);
      expect(c.gateway.baseUrl, name).to.equal('http://sandbox:4010');
      expect(c.gateway.apiKey, name).to.equal('sk_test_merchant_1001');
      expect(c.databaseUrl, name).to.equal('mysql://root:kit@mysql:3306/merchant');
      expect(c.redisUrl, name).to.equal('redis://redis:6379');
    }
  });

  it('compose refuses to start without APP_ENCRYPTION_KEY or OPS_API_TOKEN rather than run with a placeholder', () => {
    for (const name of [...KIT_SERVICES, 'sandbox'])
      expect(() => environmentOf(name, { OPS_API_TOKEN: TOKEN }), name).to.throw(/^APP_ENCRYPTION_KEY: /);
    for (const name of KIT_SERVICES)
      expect(() => environmentOf(name, { APP_ENCRYPTION_KEY: KEY }), name).to.throw(/^OPS_API_TOKEN: /);
  });

  it('/metrics is served on a port of its own, not on the public api port', () => {
    for (const name of KIT_SERVICES) expect(configOf(name).metricsPort, name).to.equal(9464);
    expect(services.api!.ports!.join(' ')).not.to.contain('9464');
  });

  it('the sandbox runs dist/src/gateway/main.js on 0.0.0.0 with the compose seed, its state on a volume', () => {
    const sandbox = services.sandbox!;
    expect(sandbox.command).to.deep.equal(['node', 'dist/src/gateway/main.js']);
    const c = configOf('sandbox', 'sandbox');
    expect(c.env).to.equal('production');
    expect(c.gateway.sandboxHost).to.equal('0.0.0.0');
    expect(`http://sandbox:${c.gateway.sandboxPort}`, 'where the kit services look for it').to.equal(
      configOf('api').gateway.baseUrl,
    );
    expect(c.gateway.sandboxSeed).to.equal('config/gateway-seed.compose.json');
    expect(c.gateway.sandboxStateFile).to.equal('var/sandbox-state.json');
    expect(sandbox.volumes).to.deep.equal(['sandbox-state:/app/var']);
    expect(compose.volumes).to.have.property('sandbox-state');
    expect(sandbox.healthcheck?.test?.join(' ')).to.contain(`127.0.0.1:${c.gateway.sandboxPort}`);
  });

  it('the compose seed is config/gateway-seed.json with allow_private_webhook_urls on, nothing else changed', () => {
    const seed = JSON.parse(read('config/gateway-seed.json'));
    const composeSeed = JSON.parse(read('config/gateway-seed.compose.json'));
    expect(seed.settings.allow_private_webhook_urls).to.equal(false);
    expect(composeSeed).to.deep.equal({
      ...seed,
      settings: { ...seed.settings, allow_private_webhook_urls: true },
    });
  });

  it('migrate runs once before the kit services, which wait for it, Redis and the sandbox', () => {
    expect(services.migrate!.command).to.deep.equal(['node', 'dist/src/cli.js', 'migrate']);
    expect(services.migrate!.restart).to.equal('no');
    expect(services.migrate!.depends_on).to.deep.equal({ mysql: { condition: 'service_healthy' } });
    for (const name of ['api', 'worker', 'scheduler'])
      expect(services[name]!.depends_on, name).to.deep.equal({
        migrate: { condition: 'service_completed_successfully' },
        redis: { condition: 'service_healthy' },
        sandbox: { condition: 'service_healthy' },
      });
  });

  it('register, once the sandbox is up, registers the api at its address on the compose network', () => {
    const register = services.register!;
    expect(register.command).to.deep.equal([
      'node',
      'dist/src/cli.js',
      'webhook',
      'register',
      '--url',
      `http://api:${configOf('api').port}/webhooks/gateway`,
    ]);
    expect(register.restart).to.equal('no');
    expect(register.depends_on).to.deep.equal({
      migrate: { condition: 'service_completed_successfully' },
      sandbox: { condition: 'service_healthy' },
    });
  });

  it("services that serve no /healthz turn the image's HEALTHCHECK off; long-running ones restart", () => {
    for (const name of ['worker', 'scheduler', 'migrate', 'register'])
      expect(services[name]!.healthcheck, name).to.deep.equal({ disable: true });
    expect(services.api!.healthcheck, "the api keeps the image's").to.equal(undefined);
    for (const name of ['api', 'worker', 'scheduler', 'sandbox'])
      expect(services[name]!.restart, name).to.equal('unless-stopped');
  });

  it('the commands name scripts the build produces, and the image holds dist/ and config/', () => {
    for (const service of Object.values(services)) {
      const script = service.command?.[1];
      if (service.command?.[0] !== 'node' || script === undefined || script === '-e') continue;
      const source = script.replace(/^dist\//, '').replace(/\.js$/, '.ts');
      expect(existsSync(at(source)), `${script} is built from ${source}`).to.equal(true);
    }
    const dockerfile = read('Dockerfile');
    expect(dockerfile).to.match(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(dockerfile, 'the seeds').to.match(/^COPY config \.\/config$/m);
    expect(dockerfile).to.match(/^CMD \["node", "dist\/src\/main\.js"\]$/m);
    expect(dockerfile).to.match(/^ENV NODE_ENV=production$/m);
  });
});
