import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import fc from 'fast-check';
import { loadSeedFile, parseSeed, SeedError } from '../../../src/gateway/state/seed.js';
import { testSeed } from '../../support/gateway.js';

/** sandbox.md section 2: the seed file, its defaults and the rules a seed must keep. */

const CONFIG_SEED = fileURLToPath(new URL('../../../config/gateway-seed.json', import.meta.url));

const PUBLISHED_SETTINGS = {
  allow_private_webhook_urls: false,
  rate_limit: {
    limit: 1000,
    window_s: 60,
    slowdown: [
      [500, 0.5],
      [750, 1.0],
    ],
  },
  public_pages_per_minute: 60,
  auth_lifetime_s: 604800,
  // Ours (docs/sandbox-decisions.md): no acquirer id drawn to read as a card number.
  card_like_acquirer_ids: 0,
};

// biome-ignore lint/suspicious/noExplicitAny: seeds are edited freely to break them
type Json = any;

/** The accounts the gateway tests run on (test/support/gateway.ts), with every optional field written out. */
function validSeed(): Json {
  const seed: Json = { ...testSeed(), settings: structuredClone(PUBLISHED_SETTINGS) };
  for (const m of seed.merchants)
    for (const method of m.payment_methods) method.refunds = method.payment_method !== 'psc';
  return seed;
}

/** Where the seed's first partner key sits among its keys. */
const partnerKeyIndex = (seed: Json): number =>
  seed.api_keys.findIndex((k: { partner_id?: number }) => k.partner_id !== undefined);

function secondMerchant(id: number): Json {
  return {
    id,
    name: 'Other',
    active: true,
    currencies: ['EUR'],
    webhook_readiness_gate: false,
    payment_methods: [],
  };
}

/** parseSeed must stop with a SeedError whose message names `path`. */
function expectSeedError(seed: unknown, path: string): SeedError {
  let caught: unknown;
  try {
    parseSeed(seed);
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected a SeedError naming ${path}`).to.be.instanceOf(SeedError);
  const error = caught as SeedError;
  expect(error.name).to.equal('SeedError');
  expect(error.message).to.include(path);
  expect(error.message).to.not.include('\n');
  return error;
}

describe('gateway seed: parseSeed', () => {
  describe('valid seeds', () => {
    it("the repo's config/gateway-seed.json parses, with the published settings", async () => {
      const json = JSON.parse(await readFile(CONFIG_SEED, 'utf8'));
      const seed = parseSeed(json);
      expect(seed.settings).to.deep.equal(PUBLISHED_SETTINGS);
      expect(seed.merchants.map((m) => m.id)).to.deep.equal([1001, 1002, 1003]);
      expect(seed.merchants[0]!.currencies).to.deep.equal(['EUR', 'USD', 'GBP', 'JPY']);
      expect(seed.partners, 'a partner with two linked merchants, and one not linked').to.deep.equal([
        { id: 9001, merchant_ids: [1001, 1002] },
      ]);
      expect(seed.api_keys.map((k) => k.key)).to.deep.equal([
        'sk_test_merchant_1001',
        'sk_test_merchant_1002',
        'sk_test_merchant_1003',
        'sk_test_partner_9001',
      ]);
      expect(await loadSeedFile(CONFIG_SEED)).to.deep.equal(seed);
    });

    it('a seed with every field written out parses to itself', () => {
      expect(parseSeed(validSeed())).to.deep.equal(validSeed());
    });

    it('a seed without settings gets the published defaults', () => {
      const input = validSeed();
      delete input.settings;
      expect(parseSeed(input).settings).to.deep.equal(PUBLISHED_SETTINGS);
    });

    it('an empty settings object gets every default', () => {
      const input = validSeed();
      input.settings = {};
      expect(parseSeed(input).settings).to.deep.equal(PUBLISHED_SETTINGS);
    });

    it('each settings field on its own keeps the defaults of the others', () => {
      const only = (field: string, value: unknown) => {
        const input = validSeed();
        input.settings = { [field]: value };
        return parseSeed(input).settings;
      };
      expect(only('allow_private_webhook_urls', true)).to.deep.equal({
        ...PUBLISHED_SETTINGS,
        allow_private_webhook_urls: true,
      });
      expect(only('public_pages_per_minute', 5)).to.deep.equal({
        ...PUBLISHED_SETTINGS,
        public_pages_per_minute: 5,
      });
      const rate = { limit: 6, window_s: 10, slowdown: [[2, 0.5]] };
      expect(only('rate_limit', rate)).to.deep.equal({ ...PUBLISHED_SETTINGS, rate_limit: rate });
      expect(only('auth_lifetime_s', 3600)).to.deep.equal({ ...PUBLISHED_SETTINGS, auth_lifetime_s: 3600 });
      expect(only('card_like_acquirer_ids', 0.25)).to.deep.equal({
        ...PUBLISHED_SETTINGS,
        card_like_acquirer_ids: 0.25,
      });
    });

    it('parsing does not change its input', () => {
      const input = validSeed();
      delete input.settings;
      const copy = structuredClone(input);
      parseSeed(input);
      expect(input).to.deep.equal(copy);
    });
  });

  describe('each broken rule stops with a SeedError naming the field', () => {
    it('missing merchants', () => {
      const input = validSeed();
      delete input.merchants;
      expectSeedError(input, 'merchants');
    });

    it('a merchant currency not on the platform ("XYZ")', () => {
      const input = validSeed();
      input.merchants[0].currencies.push('XYZ');
      expectSeedError(input, 'merchants.0.currencies.4');
    });

    it('a lower-case or unknown payment-method currency', () => {
      const input = validSeed();
      input.merchants[0].payment_methods[1].currencies = ['EUR', 'eur'];
      expectSeedError(input, 'merchants.0.payment_methods.1.currencies.1');
    });

    it('a key with both merchant_id and partner_id', () => {
      const input = validSeed();
      input.api_keys[0].partner_id = 9001;
      expectSeedError(input, 'api_keys.0');
    });

    it('a key with neither merchant_id nor partner_id', () => {
      const input = validSeed();
      const partner = partnerKeyIndex(input);
      delete input.api_keys[partner].partner_id;
      expectSeedError(input, `api_keys.${partner}`);
    });

    it('a key naming an unknown merchant', () => {
      const input = validSeed();
      const added = input.api_keys.push({
        key: 'sk_test_merchant_7777',
        merchant_id: 7777,
        scopes: [],
        active: true,
      });
      const error = expectSeedError(input, `api_keys.${added - 1}.merchant_id`);
      expect(error.message).to.include('7777');
    });

    it('a key naming an unknown partner', () => {
      const input = validSeed();
      const partner = partnerKeyIndex(input);
      input.api_keys[partner].partner_id = 9999;
      expectSeedError(input, `api_keys.${partner}.partner_id`);
    });

    it('a partner naming an unknown merchant', () => {
      const input = validSeed();
      input.partners[0].merchant_ids = [1001, 4242];
      const error = expectSeedError(input, 'partners.0.merchant_ids.1');
      expect(error.message).to.include('4242');
    });

    it('duplicate merchant ids', () => {
      const input = validSeed();
      const count = input.merchants.push(secondMerchant(1004), secondMerchant(1001));
      expectSeedError(input, `merchants.${count - 1}.id`);
    });

    it('duplicate keys', () => {
      const input = validSeed();
      const count = input.api_keys.push({
        key: 'sk_test_merchant_1001',
        merchant_id: 1001,
        scopes: [],
        active: false,
      });
      expectSeedError(input, `api_keys.${count - 1}.key`);
    });

    it('slowdown not in ascending order', () => {
      const input = validSeed();
      input.settings.rate_limit.slowdown = [
        [750, 1],
        [500, 0.5],
      ];
      expectSeedError(input, 'settings.rate_limit.slowdown.1');
    });

    it('slowdown repeating a threshold', () => {
      const input = validSeed();
      input.settings.rate_limit.slowdown = [
        [500, 0.5],
        [500, 1],
      ];
      expectSeedError(input, 'settings.rate_limit.slowdown.1');
    });

    it('a slowdown threshold equal to or above the limit', () => {
      for (const n of [1000, 1001]) {
        const input = validSeed();
        input.settings.rate_limit.slowdown = [
          [500, 0.5],
          [n, 1],
        ];
        expectSeedError(input, 'settings.rate_limit.slowdown.1');
      }
      const input = validSeed();
      input.settings.rate_limit = { limit: 6, window_s: 60, slowdown: [[6, 1]] };
      expectSeedError(input, 'settings.rate_limit.slowdown.0');
    });

    it('an unknown top-level field', () => {
      const input = validSeed();
      input.merchant = [];
      expectSeedError(input, 'merchant');
      const other = validSeed();
      other.unexpected_field = true;
      expectSeedError(other, 'unexpected_field');
    });

    it('a payment method refunds unless it says "refunds": false', () => {
      const input = validSeed();
      delete input.merchants[0].payment_methods[0].refunds;
      const methods = parseSeed(input).merchants[0]!.payment_methods;
      expect(methods.map((m) => [m.payment_method, m.refunds])).to.deep.equal([
        ['ideal', true],
        ['psc', false],
      ]);
      for (const value of ['no', 0, null]) {
        const bad = validSeed();
        bad.merchants[0].payment_methods[1].refunds = value;
        expectSeedError(bad, 'merchants.0.payment_methods.1.refunds');
      }
    });

    it('an auth_lifetime_s that is not a positive whole number of seconds (at most ten years)', () => {
      for (const value of [0, -1, 1.5, '604800', null, true, 10 * 365 * 24 * 3600 + 1]) {
        const input = validSeed();
        input.settings.auth_lifetime_s = value;
        expectSeedError(input, 'settings.auth_lifetime_s');
      }
      const input = validSeed();
      input.settings.auth_lifetime_s = 10 * 365 * 24 * 3600;
      expect(parseSeed(input).settings.auth_lifetime_s).to.equal(315_360_000);
    });

    it('a card_like_acquirer_ids that is not a share from 0 to 1', () => {
      for (const value of [-0.1, 1.5, '0.5', null, true]) {
        const input = validSeed();
        input.settings.card_like_acquirer_ids = value;
        expectSeedError(input, 'settings.card_like_acquirer_ids');
      }
    });

    it('an unknown field in settings', () => {
      const input = validSeed();
      input.settings.rate_limits = {};
      expectSeedError(input, 'rate_limits');
    });

    it('a seed that is not an object at all', () => {
      for (const input of [null, [], 'seed', 42]) expect(() => parseSeed(input)).to.throw(SeedError);
    });

    it('property: removing any required field names that field', () => {
      const required: string[][] = [
        ['merchants'],
        ['partners'],
        ['api_keys'],
        ...['id', 'name', 'active', 'currencies', 'webhook_readiness_gate', 'payment_methods'].map((f) => [
          'merchants',
          '0',
          f,
        ]),
        ...['payment_method', 'label', 'provider', 'countries', 'currencies', 'enabled'].map((f) => [
          'merchants',
          '0',
          'payment_methods',
          '1',
          f,
        ]),
        ['partners', '0', 'id'],
        ['partners', '0', 'merchant_ids'],
        ...['key', 'scopes', 'active'].map((f) => ['api_keys', '0', f]),
        ...['key', 'scopes', 'active'].map((f) => ['api_keys', String(partnerKeyIndex(validSeed())), f]),
      ];
      fc.assert(
        fc.property(fc.constantFrom(...required), (path) => {
          const input = validSeed();
          let parent = input;
          for (const part of path.slice(0, -1)) parent = parent[part];
          delete parent[path[path.length - 1]!];
          expectSeedError(input, path.join('.'));
        }),
        { numRuns: 200 },
      );
    });
  });
});

describe('gateway seed: loadSeedFile', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'seed-test-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function loadError(path: string): Promise<SeedError> {
    let caught: unknown;
    try {
      await loadSeedFile(path);
    } catch (e) {
      caught = e;
    }
    expect(caught, `loading ${path} must fail`).to.be.instanceOf(SeedError);
    return caught as SeedError;
  }

  function expectOneLineNaming(error: SeedError, path: string): void {
    expect(error.message).to.include(path);
    expect(error.message.split(/\r?\n/), JSON.stringify(error.message)).to.have.length(1);
  }

  it('a missing file: a one-line message naming the path', async () => {
    const path = join(dir, 'does-not-exist.json');
    expectOneLineNaming(await loadError(path), path);
  });

  it('a directory instead of a file: a one-line message naming the path', async () => {
    expectOneLineNaming(await loadError(dir), dir);
  });

  const invalidJson: [string, string][] = [
    ['a truncated file', '{\n  "merchants": [\n'],
    ['a trailing comma', '{\n  "merchants": [],\n}\n'],
    ['an empty file', ''],
    [
      'an unquoted value over several lines',
      '{\n  "merchants": [\n    { "id": 1001, "active": yes }\n  ]\n}\n',
    ],
    ['a comment', '{\n  // the accounts\n  "merchants": []\n}\n'],
  ];
  invalidJson.forEach(([label, text], i) => {
    it(`invalid JSON (${label}): a one-line message naming the path`, async () => {
      const path = join(dir, `invalid-${i}.json`);
      await writeFile(path, text);
      const error = await loadError(path);
      expectOneLineNaming(error, path);
    });
  });

  it('valid JSON that breaks a rule: the message names the path and the field', async () => {
    const path = join(dir, 'bad-rule.json');
    const input = validSeed();
    input.api_keys[0].merchant_id = 5;
    await writeFile(path, JSON.stringify(input, null, 2));
    const error = await loadError(path);
    expectOneLineNaming(error, path);
    expect(error.message).to.include('api_keys.0.merchant_id');
  });

  it('a valid file loads the same seed parseSeed gives', async () => {
    const path = join(dir, 'valid.json');
    await writeFile(path, JSON.stringify(validSeed(), null, 2));
    expect(await loadSeedFile(path)).to.deep.equal(parseSeed(validSeed()));
  });
});
