import { expect } from 'chai';
import pino from 'pino';
import { GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';
import type { GatewayKeyInfo } from '../../../src/client/schemas.js';
import { checkGatewayKey, GatewayKeyError, judgeKey } from '../../../src/kit/gateway-key.js';
import { settingProblem } from '../../../src/startup.js';

const merchantKey: GatewayKeyInfo = { key_type: 'merchant', merchant_id: 1001, scopes: ['webhooks:manage'] };
const partnerKey: GatewayKeyInfo = {
  key_type: 'partner',
  linked_merchant_ids: [1001, 1003],
  scopes: ['webhooks:manage'],
};

/** sandbox.md section 11, Key information, judged at start-up against GATEWAY_MERCHANTS. */
describe('the gateway key, judged at start-up', () => {
  it("a merchant key: no refusal, no warning, the key's own merchant", () => {
    const verdict = judgeKey(merchantKey, []);
    expect(verdict.refusal).to.equal(null);
    expect(verdict.warnings).to.deep.equal([]);
    expect(verdict.report).to.deep.equal({
      key_type: 'merchant',
      merchant_id: 1001,
      merchant_ids: [1001],
      scopes: ['webhooks:manage'],
    });
    expect(judgeKey(merchantKey, [1001]).refusal, 'its own id set: fine').to.equal(null);
  });

  it('a merchant key with another merchant, or several: refused, naming the variable', () => {
    const { refusal } = judgeKey(merchantKey, [1002]);
    expect(settingProblem(refusal)).to.equal(
      "GATEWAY_MERCHANTS: 1002, but the key is merchant 1001's own: a merchant key acts on its own account (unset it)",
    );
    expect(settingProblem(judgeKey(merchantKey, [1001, 1002]).refusal)).to.equal(
      'GATEWAY_MERCHANTS: lists 2 merchants, but the key is a merchant key, which acts on its own account only: a partner key acts for several',
    );
  });

  it('a partner key without merchants, or with one not linked among them: refused, naming the linked ones', () => {
    expect(settingProblem(judgeKey(partnerKey, []).refusal)).to.equal(
      'GATEWAY_MERCHANTS: required with a partner key: the merchants the kit acts for (linked merchants: 1001, 1003)',
    );
    expect(settingProblem(judgeKey(partnerKey, [1001, 1002]).refusal)).to.equal(
      'GATEWAY_MERCHANTS: merchant 1002 is not linked to this partner key (linked merchants: 1001, 1003)',
    );
    expect(settingProblem(judgeKey({ ...partnerKey, linked_merchant_ids: [] }, [1002]).refusal)).to.match(
      /\(linked merchants: none\)$/,
    );
  });

  it('a partner key for linked merchants starts, warned of each one without a key of its own', () => {
    const verdict = judgeKey(partnerKey, [1003, 1001], new Set([1001]));
    expect(verdict.refusal).to.equal(null);
    expect(verdict.report).to.deep.equal({
      key_type: 'partner',
      merchant_id: 1003,
      merchant_ids: [1003, 1001],
      scopes: ['webhooks:manage'],
    });
    expect(verdict.warnings).to.have.length(1);
    expect(verdict.warnings[0]).to.match(
      /merchant 1003 has no key of its own \(GATEWAY_MERCHANT_KEYS, or stored with `merchant-key set`\)/,
    );
    expect(judgeKey(partnerKey, [1003, 1001], new Set([1001, 1003])).warnings, 'both keyed').to.deep.equal(
      [],
    );
  });

  it('a key without webhooks:manage starts, warned; scopes the gateway does not list warn of nothing', () => {
    const verdict = judgeKey({ ...merchantKey, scopes: [] }, []);
    expect(verdict.refusal).to.equal(null);
    expect(verdict.warnings).to.have.length(1);
    expect(verdict.warnings[0]).to.match(/lacks the webhooks:manage scope/);
    const unsaid = judgeKey({ key_type: 'merchant' }, [1001]);
    expect(unsaid.warnings).to.deep.equal([]);
    expect(unsaid.report).to.deep.equal({
      key_type: 'merchant',
      merchant_id: 1001,
      merchant_ids: [1001],
      scopes: null,
    });
  });
});

describe('the gateway key, read at start-up', () => {
  const logger = pino({ level: 'silent' });
  const answering = (answer: () => Promise<unknown>) => ({
    apiKeyInfo: answer as never,
  });

  it('an unknown key (401) and an inactive one (403) stop start-up with one line naming GATEWAY_API_KEY', async () => {
    const unknown = answering(() =>
      Promise.reject(new GatewayError(401, 'ERR_AUTH_FAILED', 'Invalid API key.')),
    );
    const error = await checkGatewayKey(unknown, [], new Set(), logger).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(GatewayKeyError);
    expect(settingProblem(error)).to.equal('GATEWAY_API_KEY: the gateway does not know this key (401)');
    const inactive = answering(() =>
      Promise.reject(new GatewayError(403, 'ERR_AUTH_FAILED', 'The key is inactive.')),
    );
    expect(
      settingProblem(await checkGatewayKey(inactive, [], new Set(), logger).catch((e: unknown) => e)),
    ).to.equal('GATEWAY_API_KEY: the gateway refuses this key (403: The key is inactive.)');
  });

  it('a gateway without the operation (404) or not answering: tolerated, the key reported unknown', async () => {
    for (const failure of [
      new GatewayError(404, 'ERR_NOT_FOUND', 'Not found.'),
      new GatewayNetworkError('connection', 'connect ECONNREFUSED', true),
    ]) {
      const report = await checkGatewayKey(
        answering(() => Promise.reject(failure)),
        [],
        new Set(),
        logger,
      );
      expect(report).to.deep.equal({ key_type: null, merchant_id: null, merchant_ids: [], scopes: null });
    }
  });

  it('a partner key without GATEWAY_MERCHANTS read from the gateway: refused', async () => {
    const partner = answering(async () => ({ status: 200, data: partnerKey }));
    const error = await checkGatewayKey(partner, [], new Set(), logger).catch((e: unknown) => e);
    expect(settingProblem(error)).to.match(/^GATEWAY_MERCHANTS: required with a partner key/);
  });
});
