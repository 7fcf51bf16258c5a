import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { CustomerTokens } from '../../../src/merchant/customers/customer-token.js';
import {
  mayScoped,
  PER_MERCHANT,
  PERMISSIONS,
  type Permission,
} from '../../../src/merchant/operators/roles.js';
import {
  chooseMerchant,
  customersOf,
  listFilter,
  oneMerchant,
  parseScope,
  signedMerchant,
  withinScope,
} from '../../../src/merchant/orders/order-merchant.js';

/**
 * Credentials and customers per merchant (issue 45, part 2), the pure parts: which merchant a request
 * is for, what a scoped credential sees, what a scope may name, and customer tokens that name their
 * merchant. The HTTP side is test/integration/merchant/merchant-scopes.test.ts.
 */
const SERVED = [1001, 1004];

describe('merchant scopes: what a credential scoped to merchants may do', () => {
  it("the operations guide's `scoped` column says what the code enforces, permission by permission", () => {
    const guide = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
    const lines = guide.slice(guide.indexOf('| permission | routes |')).split('\n');
    expect(lines[0]!.split('|').map((c) => c.trim())[8]).to.equal('scoped');
    const rows = lines.slice(2, lines.slice(2).findIndex((l) => !l.startsWith('|')) + 2);
    const table = Object.fromEntries(
      rows.map((l) => {
        const cells = l.split('|').map((c) => c.trim());
        return [cells[1]!.replace(/`/g, ''), cells[8] === 'yes'];
      }),
    );
    expect(table).to.deep.equal(PER_MERCHANT);
    expect(Object.keys(PER_MERCHANT).sort()).to.deep.equal(Object.keys(PERMISSIONS).sort());
  });

  it('a scope takes nothing from a role but what reads or acts across every merchant; none is the role itself', () => {
    for (const permission of Object.keys(PERMISSIONS) as Permission[]) {
      expect(mayScoped('finance', null, permission), permission).to.equal(
        (PERMISSIONS[permission] as readonly string[]).includes('finance'),
      );
      expect(mayScoped('finance', [1004], permission), permission).to.equal(
        (PERMISSIONS[permission] as readonly string[]).includes('finance') && PER_MERCHANT[permission],
      );
    }
  });

  it("which merchant a request is for: named and served, within the scope; left out, the scope's one or the kit's one", () => {
    expect(chooseMerchant(SERVED, 1004)).to.deep.equal({ merchantId: 1004 });
    expect(chooseMerchant(SERVED, undefined)).to.have.property('problem').that.contains('is required');
    expect(chooseMerchant(SERVED, 1002)).to.have.property('problem').that.contains('1001, 1004');
    expect(chooseMerchant(SERVED, undefined, [1004])).to.deep.equal({ merchantId: 1004 });
    expect(chooseMerchant(SERVED, 1001, [1004]))
      .to.have.property('outOfScope')
      .that.contains('(1004)');
    expect(chooseMerchant(SERVED, undefined, SERVED)).to.have.property('problem');
    // A single shop: nothing to say, as before platform mode.
    expect(chooseMerchant([1001], undefined)).to.deep.equal({ merchantId: 1001 });
    expect(chooseMerchant([], undefined)).to.deep.equal({ merchantId: null });
    expect(chooseMerchant([], 1001)).to.have.property('problem').that.contains('left out');
  });

  it("an order that names no merchant is the kit's first's: seen by a scope that holds the first", () => {
    expect(withinScope(null, 1004, SERVED)).to.equal(true);
    expect(withinScope([1004], 1004, SERVED)).to.equal(true);
    expect(withinScope([1004], 1001, SERVED)).to.equal(false);
    expect(withinScope([1004], null, SERVED)).to.equal(false);
    expect(withinScope([1001], null, SERVED)).to.equal(true);
    expect(withinScope([1001], null, [])).to.equal(false);
  });

  it("a list shows the scope's merchants, or the one named within it; unscoped and unnamed, everything", () => {
    expect(listFilter(SERVED, undefined, null)).to.equal(null);
    expect(listFilter(SERVED, undefined, [1004])).to.deep.equal({ ids: [1004], unnamed: false });
    expect(listFilter(SERVED, undefined, [1001])).to.deep.equal({ ids: [1001], unnamed: true });
    expect(listFilter(SERVED, 1001, null)).to.deep.equal({ ids: [1001], unnamed: true });
    expect(listFilter(SERVED, 1001, [1004])).to.have.property('outOfScope');
    expect(listFilter(SERVED, 1002, null)).to.have.property('problem');
  });

  it('a scope names merchants the kit serves, each once; another is refused, naming it', () => {
    expect(parseScope('1004', SERVED)).to.deep.equal([1004]);
    expect(parseScope(' 1001, 1004,1001 ', SERVED)).to.deep.equal([1001, 1004]);
    expect(parseScope('1002', SERVED)).to.deep.equal({
      problem: 'names merchant 1002, which this kit does not act for (GATEWAY_MERCHANTS: 1001, 1004)',
    });
    expect(parseScope('', SERVED)).to.have.property('problem');
    expect(parseScope('10x4', SERVED)).to.have.property('problem').that.contains('"10x4"');
    expect(parseScope('1001', [])).to.have.property('problem').that.contains('own account only');
  });
});

describe('merchant scopes: customers per merchant', () => {
  it("a customer's rows: one merchant's among several (the first's with those that name none); a single shop's all", () => {
    expect(oneMerchant(1004, SERVED)).to.deep.equal({ ids: [1004], unnamed: false });
    expect(oneMerchant(1001, SERVED)).to.deep.equal({ ids: [1001], unnamed: true });
    expect(oneMerchant(null, SERVED)).to.deep.equal({ ids: [1001], unnamed: true });
    expect(customersOf(1004, SERVED)).to.deep.equal({ ids: [1004], unnamed: false });
    expect(customersOf(1001, [1001])).to.equal(undefined);
    expect(customersOf(null, [])).to.equal(undefined);
  });

  it("a token names its merchant unless it is the kit's first or only: a single shop's tokens are as they were", () => {
    expect(signedMerchant(1004, SERVED)).to.equal(1004);
    expect(signedMerchant(1001, SERVED)).to.equal(null);
    expect(signedMerchant(null, SERVED)).to.equal(null);
    expect(signedMerchant(1001, [])).to.equal(null);
    expect(signedMerchant(1001, [1001])).to.equal(null);

    const tokens = new CustomerTokens(Buffer.alloc(32, 7));
    const now = Date.UTC(2026, 11, 3);
    const plain = tokens.issue('cus-1', now).token;
    const outlet = tokens.issue('cus-1', now, undefined, 1004).token;
    const paying = tokens.issue('cus-1', now, { orderId: 'ord_1', credential: 'opr_1' }, 1004).token;
    expect(tokens.verify('cus-1', plain, now)).to.equal(true);
    expect(tokens.verify('cus-1', plain, now, 1004)).to.equal(false);
    expect(tokens.verify('cus-1', outlet, now, 1004)).to.equal(true);
    expect(tokens.verify('cus-1', outlet, now)).to.equal(false);
    expect(tokens.verify('cus-1', outlet, now, 1005)).to.equal(false);
    expect(tokens.grant('cus-1', paying, now, 1004)).to.deep.equal({ orderId: 'ord_1', credential: 'opr_1' });
    expect(tokens.grant('cus-1', paying, now)).to.equal(null);
    // An erasure's reference: the first merchant's as before, another's its own.
    expect(tokens.erasureReference('cus-1', null)).to.equal(tokens.erasureReference('cus-1'));
    expect(tokens.erasureReference('cus-1', 1004)).to.not.equal(tokens.erasureReference('cus-1'));
  });
});
