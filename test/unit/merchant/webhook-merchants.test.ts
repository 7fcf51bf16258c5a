import { expect } from 'chai';
import { loadConfig } from '../../../src/config.js';
import { extraSecretsOf } from '../../../src/gateway-merchants.js';
import { webhookMerchants, webhookUrl } from '../../../src/kit/gateway.js';
import { sameMerchantRule } from '../../../src/merchant/orders/order-merchant.js';
import { secretOwner } from '../../../src/merchant/store/secrets.js';
import { deliveryTarget } from '../../../src/merchant/webhooks/delivery-endpoint.js';

/**
 * Issue 45, webhooks per merchant: the pure rules. Which endpoints the kit has and at which URL, whose
 * secrets a merchant's deliveries are verified with, which merchant a receiver path names, whose
 * orders an event may change, and GATEWAY_WEBHOOK_SECRETS' `merchant_id=secret` form. Through the
 * kit: platform-webhooks.test.ts.
 */
describe('merchant: webhooks per merchant, the rules', () => {
  const SECRET_A = 'whsec_aaaaaaaaaaaaaaaaaaaaaaaa';
  const SECRET_B = 'whsec_bbbbbbbbbbbbbbbbbbbbbbbb';

  it('a kit of one merchant has one endpoint at /webhooks/gateway; a kit of several, one per merchant at /webhooks/gateway/{id}', () => {
    const base = 'https://shop.example';
    expect(webhookMerchants([])).to.deep.equal([null]);
    expect(webhookMerchants([1001])).to.deep.equal([null]);
    expect(webhookUrl(base, [1001], null)).to.equal(`${base}/webhooks/gateway`);
    expect(webhookUrl(base, [], null)).to.equal(`${base}/webhooks/gateway`);
    expect(webhookMerchants([1001, 1004])).to.deep.equal([1001, 1004]);
    expect(webhookUrl(base, [1001, 1004], 1004)).to.equal(`${base}/webhooks/gateway/1004`);
    expect(webhookUrl(base, [1001, 1004], null), 'null: the first').to.equal(`${base}/webhooks/gateway/1001`);
  });

  it("a merchant's secrets: every row in a kit of one merchant; its own (and, for the first, those naming none) in a kit of several", () => {
    expect(secretOwner([], null)).to.deep.equal({ merchantId: null, reads: 'all' });
    expect(secretOwner([1001], null)).to.deep.equal({ merchantId: 1001, reads: 'all' });
    expect(secretOwner([1001, 1004], null)).to.deep.equal({ merchantId: 1001, reads: 'own-and-unnamed' });
    expect(secretOwner([1001, 1004], 1001)).to.deep.equal({ merchantId: 1001, reads: 'own-and-unnamed' });
    expect(secretOwner([1001, 1004], 1004)).to.deep.equal({ merchantId: 1004, reads: 'own' });
  });

  it('the receiver takes POST /webhooks/gateway and /webhooks/gateway/{merchant_id}, a query string allowed; nothing else', () => {
    const req = (method: string, url: string) => ({ method, url }) as never;
    expect(deliveryTarget(req('POST', '/webhooks/gateway'))).to.deep.equal({ merchant: null });
    expect(deliveryTarget(req('POST', '/webhooks/gateway?x=1'))).to.deep.equal({ merchant: null });
    expect(deliveryTarget(req('POST', '/webhooks/gateway/1004'))).to.deep.equal({ merchant: '1004' });
    expect(deliveryTarget(req('POST', '/webhooks/gateway/1004?x=1'))).to.deep.equal({ merchant: '1004' });
    for (const [method, path] of [
      ['GET', '/webhooks/gateway/1004'],
      ['POST', '/webhooks/gateway/'],
      ['POST', '/webhooks/gateway/01004'],
      ['POST', '/webhooks/gateway/abc'],
      ['POST', '/webhooks/gateway/1004/'],
      ['POST', '/webhooks/gateway/1004/x'],
      ['POST', '/webhooks/gateway/12345678901'],
      ['POST', '/webhooks/gatewayx/1004'],
    ])
      expect(deliveryTarget(req(method!, path!)), `${method} ${path}`).to.equal(null);
  });

  it("an event changes its own merchant's orders only, a null being the first's; in a kit of one, any", () => {
    const one = sameMerchantRule([1001]);
    expect(one(1001, 1004)).to.equal(true);
    expect(one(null, null)).to.equal(true);
    const several = sameMerchantRule([1001, 1004]);
    expect(several(1004, 1004)).to.equal(true);
    expect(several(1001, 1004)).to.equal(false);
    expect(several(1004, 1001)).to.equal(false);
    expect(several(null, 1001), 'an order made before platform mode').to.equal(true);
    expect(several(null, 1004)).to.equal(false);
    expect(several(1001, null), 'an event kept before platform mode').to.equal(true);
  });

  describe('GATEWAY_WEBHOOK_SECRETS', () => {
    const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }, () => 'generated');
    const problem = (env: Record<string, string>) => {
      try {
        load(env);
      } catch (error) {
        return (error as Error).message;
      }
      return null;
    };

    it('takes `merchant_id=secret` beside plain secrets; each merchant verifies with its own', () => {
      const c = load({
        GATEWAY_MERCHANTS: '1001,1004',
        GATEWAY_WEBHOOK_SECRETS: ` 1001=${SECRET_A}, 1004=${SECRET_B} `,
      });
      expect(c.gateway.extraWebhookSecrets).to.deep.equal([]);
      expect([...c.gateway.merchantWebhookSecrets]).to.deep.equal([
        [1001, [SECRET_A]],
        [1004, [SECRET_B]],
      ]);
      expect(extraSecretsOf(c.gateway, 1004)).to.deep.equal([SECRET_B]);
      expect(extraSecretsOf(c.gateway, null), 'null: the first').to.deep.equal([SECRET_A]);
    });

    it('a kit of one merchant takes every secret, named or not', () => {
      const c = load({
        GATEWAY_MERCHANT_ID: '1001',
        GATEWAY_WEBHOOK_SECRETS: `${SECRET_A},1001=${SECRET_B}`,
      });
      expect(extraSecretsOf(c.gateway, 1001)).to.deep.equal([SECRET_A, SECRET_B]);
      expect(extraSecretsOf(load({ GATEWAY_WEBHOOK_SECRETS: SECRET_A }).gateway, null)).to.deep.equal([
        SECRET_A,
      ]);
    });

    it('refuses a secret that names no merchant in a kit of several, and one for a merchant not listed', () => {
      expect(problem({ GATEWAY_MERCHANTS: '1001,1004', GATEWAY_WEBHOOK_SECRETS: SECRET_A })).to.contain(
        'GATEWAY_WEBHOOK_SECRETS: names no merchant for a secret, and this kit acts for several (1001, 1004): write each as merchant_id=secret',
      );
      expect(
        problem({ GATEWAY_MERCHANTS: '1001,1004', GATEWAY_WEBHOOK_SECRETS: `1002=${SECRET_A}` }),
      ).to.contain(
        'GATEWAY_WEBHOOK_SECRETS: gives a secret for merchant 1002, which GATEWAY_MERCHANTS does not list',
      );
      expect(problem({ GATEWAY_WEBHOOK_SECRETS: `1001=${SECRET_A}` })).to.contain(
        'GATEWAY_WEBHOOK_SECRETS: gives a secret for merchant 1001',
      );
      expect(problem({ GATEWAY_WEBHOOK_SECRETS: '1001=short' })).to.contain(
        'GATEWAY_WEBHOOK_SECRETS: must be comma-separated signing secrets of 16 characters or more, each alone or as merchant_id=secret',
      );
    });
  });
});
