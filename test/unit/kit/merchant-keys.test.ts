import { expect } from 'chai';
import { merchantKeyProblem } from '../../../src/cli/actions/merchant-keys.js';
import { merchantKeysInUse, startingMerchantKeys } from '../../../src/kit/merchant-keys.js';
import { MerchantKeyStore, merchantKeyAad } from '../../../src/merchant/store/merchant-keys.js';
import type { Models } from '../../../src/merchant/store/models.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seededRandom } from '../../../src/shared/ids.js';
import { NotSealedHere, SecretBox } from '../../../src/shared/secret-box.js';

const KEY_1001 = 'sk_test_merchant_1001';
const KEY_1004 = 'sk_test_merchant_1004';

/** Platform mode's merchant keys at rest (issue 45): which one the kit uses, and what binds them. */
describe('merchant keys: the environment and the store', () => {
  const box = new SecretBox(Buffer.alloc(32, 7), seededRandom(3));

  it('the environment wins for a merchant given in both; a stored key of a merchant not served is unused', () => {
    const used = merchantKeysInUse(
      new Map([[1001, KEY_1001]]),
      new Map([
        [1001, 'sk_stored_1001_older'],
        [1004, KEY_1004],
        [1003, 'sk_test_merchant_1003'],
      ]),
      [1001, 1004],
    );
    expect([...used.keys]).to.deep.equal([
      [1001, KEY_1001],
      [1004, KEY_1004],
    ]);
    expect(used).to.deep.include({ environment: [1001], stored: [1004], overridden: [1001], unused: [1003] });
  });

  it('at start: the store is asked in platform mode only, and the log names merchants, never a key', async () => {
    const lines: unknown[] = [];
    const logger = { info: (fields: unknown, message?: string) => void lines.push([fields, message]) };
    let asked = 0;
    const stored = async () => {
      asked++;
      return new Map([[1004, KEY_1004]]);
    };
    const environment = new Map([[1001, KEY_1001]]);
    expect(await startingMerchantKeys([], environment, stored, logger)).to.equal(environment);
    expect(asked, 'no merchants listed: not asked').to.equal(0);

    const keys = await startingMerchantKeys([1001, 1004], environment, stored, logger);
    expect([...keys.keys()]).to.deep.equal([1001, 1004]);
    expect(lines).to.deep.equal([
      [
        { from_environment: [1001], stored: [1004], environment_over_stored: [], stored_unused: [] },
        'merchant keys: GATEWAY_MERCHANT_KEYS, then those stored (merchant-key set)',
      ],
    ]);
    expect(JSON.stringify(lines)).to.not.match(/sk_test/);
  });

  it("a sealed key is bound to its merchant: copied into another merchant's row, it does not open", async () => {
    const sealed = box.seal(KEY_1004, merchantKeyAad(1004));
    expect(sealed).to.not.contain(KEY_1004);
    expect(box.open(sealed, merchantKeyAad(1004))).to.equal(KEY_1004);
    expect(() => box.open(sealed, merchantKeyAad(1001))).to.throw(NotSealedHere);
    expect(merchantKeyAad(1004), 'its own purpose, apart from the webhook secrets and saved cards').to.equal(
      'merchant-key:1004',
    );

    // The store reads rows: 1004's sealed key in 1001's row stops the read, naming 1001 and no key.
    const rows = [
      { merchant_id: 1001, key_sealed: sealed },
      { merchant_id: 1004, key_sealed: sealed },
    ];
    const models = { MerchantKey: { findAll: async () => rows } } as unknown as Models;
    const store = new MerchantKeyStore(models, box, new ManualClock());
    const error = await store.all().then(
      () => null,
      (e: Error) => e,
    );
    expect(error).to.be.instanceOf(NotSealedHere);
    expect(error!.message).to.match(/^the key of merchant 1001 does not open under APP_ENCRYPTION_KEY/);
    expect(error!.message).to.not.contain(KEY_1004);
    rows.shift();
    expect([...(await store.all())]).to.deep.equal([[1004, KEY_1004]]);
  });

  it('a key read from stdin: refused empty, short, with spaces or too long, in words that never repeat it', () => {
    expect(merchantKeyProblem('')).to.match(/^no key read: pipe it in/);
    expect(merchantKeyProblem('sk_1004')).to.equal(
      'the key read is 7 characters: a gateway key has 8 or more',
    );
    expect(merchantKeyProblem('sk_test merchant')).to.equal('a key is one line, without spaces');
    expect(merchantKeyProblem('sk_test_\u00e9t\u00e9_1004')).to.equal('a key is printable ASCII characters');
    expect(merchantKeyProblem('k'.repeat(257))).to.equal('the key read is 257 characters: at most 256');
    expect(merchantKeyProblem(KEY_1004)).to.equal(null);
  });
});
