import { expect } from 'chai';
import { GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';
import { gatewayFailure } from '../../../src/merchant/errors/answer.js';

/** A gateway failure a route passes through: whose problem it is decides 502 or 503. */
describe('merchant: gateway failures as answers', () => {
  it('no answer from the gateway is 503 GATEWAY_UNAVAILABLE', () => {
    const answer = gatewayFailure(new GatewayNetworkError('timeout', 'timed out', false))!;
    expect([answer.status, answer.code]).to.deep.equal([503, 'GATEWAY_UNAVAILABLE']);
  });

  it("the gateway slowing the key down is 503 with the gateway's Retry-After", () => {
    const answer = gatewayFailure(
      new GatewayError(429, 'ERR_TOO_MANY_REQUESTS', 'Slow down.', { retryAfterSeconds: 7 }),
    )!;
    expect([answer.status, answer.code]).to.deep.equal([503, 'GATEWAY_UNAVAILABLE']);
    expect(answer.extra.headers).to.deep.equal({ 'Retry-After': '7' });
    expect(answer.extra.data).to.deep.equal({ gateway_code: 'ERR_TOO_MANY_REQUESTS' });
  });

  it('a gateway 500 is 503, a refusal of the key is 502', () => {
    expect(gatewayFailure(new GatewayError(500, 'ERR_UNEXPECTED', 'Oops.'))!.status).to.equal(503);
    const refused = gatewayFailure(new GatewayError(401, 'ERR_AUTH_FAILED', 'No.'))!;
    expect([refused.status, refused.code]).to.deep.equal([502, 'GATEWAY_ERROR']);
    expect(refused.extra.headers).to.equal(undefined);
  });

  it('anything else is not a gateway failure', () => {
    expect(gatewayFailure(Object.assign(new Error('aborted'), { status: 400 }))).to.equal(null);
  });
});
