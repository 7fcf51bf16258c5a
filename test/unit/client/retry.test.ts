import { expect } from 'chai';
import fc from 'fast-check';
import { GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';
import {
  backoffMs,
  DEFAULT_RETRY,
  type RetryPolicy,
  retryDelayMs,
  shouldRetry,
} from '../../../src/client/retry.js';

/** Pure tests of the client's retry rules: no I/O, no timers. */

const gatewayError = (status: number, code: string, details: GatewayError['details'] = {}) =>
  new GatewayError(status, code, `HTTP ${status} ${code}`, details);

describe('client/retry: backoffMs', () => {
  const policyArb = fc.record({
    maxAttempts: fc.integer({ min: 1, max: 10 }),
    baseDelayMs: fc.integer({ min: 1, max: 10_000 }),
    maxDelayMs: fc.integer({ min: 1, max: 600_000 }),
  });
  const randomArb = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it('is always an integer within [0, min(max, base * 2^(n-1)))', () => {
    fc.assert(
      fc.property(policyArb, fc.integer({ min: 1, max: 5000 }), randomArb, (policy, attempt, random) => {
        const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
        const ms = backoffMs(policy, attempt, random);
        expect(Number.isInteger(ms), `${ms}`).to.equal(true);
        expect(ms >= 0, `${ms} >= 0`).to.equal(true);
        expect(ms < cap, `${ms} < ${cap}`).to.equal(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('never exceeds the cap however many attempts (2^n overflows to Infinity past attempt 1024)', () => {
    fc.assert(
      fc.property(
        policyArb,
        fc.integer({ min: 1000, max: 100_000 }),
        randomArb,
        (policy, attempt, random) => {
          const ms = backoffMs(policy, attempt, random);
          expect(ms >= 0 && ms < policy.maxDelayMs, `${ms}`).to.equal(true);
        },
      ),
    );
  });

  it('grows with the attempt until the cap: default policy, random 0.5', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs(DEFAULT_RETRY, n, 0.5));
    expect(delays).to.deep.equal([100, 200, 400, 800, 1600, 2500, 2500, 2500]);
  });

  it('is jittered over the whole range: random 0 waits nothing, random just under 1 waits just under the cap', () => {
    expect(backoffMs(DEFAULT_RETRY, 3, 0)).to.equal(0);
    expect(backoffMs(DEFAULT_RETRY, 3, 0.999999)).to.equal(799);
    expect(backoffMs({ maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 300 }, 3, 0.999999)).to.equal(299);
  });

  it('has the documented defaults: 4 attempts, 200 ms base, 5 s cap', () => {
    expect(DEFAULT_RETRY).to.deep.equal({ maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5000 });
  });
});

describe('client/retry: shouldRetry', () => {
  const both = [true, false];

  it('500 is retried, keyed or not (gateway-api.md, HTTP statuses: "safe to retry with backoff")', () => {
    for (const replayable of both) {
      expect(
        shouldRetry(gatewayError(500, 'ERR_UNEXPECTED'), replayable),
        `replayable ${replayable}`,
      ).to.equal(true);
    }
  });

  it('other 5xx answers (502 ERR_GATEWAY_ERROR, 503) are retried only when replayable', () => {
    for (const status of [502, 503, 504]) {
      expect(shouldRetry(gatewayError(status, 'ERR_GATEWAY_ERROR'), true), `${status}`).to.equal(true);
      expect(shouldRetry(gatewayError(status, 'ERR_GATEWAY_ERROR'), false), `${status}`).to.equal(false);
    }
  });

  it('429 is retried whatever the method (the gateway refused before acting)', () => {
    for (const replayable of both) {
      const error = gatewayError(429, 'ERR_RATE_LIMITED', { retryAfterSeconds: 3 });
      expect(shouldRetry(error, replayable)).to.equal(true);
    }
  });

  it('409 ERR_IDEMPOTENT_REQUEST_IN_PROGRESS is retried; the other 409s are not', () => {
    for (const replayable of both) {
      expect(shouldRetry(gatewayError(409, 'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS'), replayable)).to.equal(true);
      expect(shouldRetry(gatewayError(409, 'ERR_IDEMPOTENCY_CONFLICT'), replayable)).to.equal(false);
      expect(
        shouldRetry(gatewayError(409, 'ERR_DUPLICATE', { data: { transaction_id: 100000 } }), replayable),
      ).to.equal(false);
    }
  });

  it('declines, validation, auth and not-found answers are never retried automatically', () => {
    const answers: [number, string][] = [
      [400, 'ERR_CARD_DO_NOT_HONOR'],
      [400, 'ERR_CARD_INSUFFICIENT_FUNDS'],
      [400, 'ERR_CARD_FRAUD_SUSPECTED'],
      [400, 'ERR_DO_NOT_RETRY'],
      // retryable for the caller (later, a new decision), but not a blind automatic repeat
      [400, 'ERR_CARD_ISSUER_UNAVAILABLE'],
      [400, 'ERR_CARD_SYSTEM_ERROR'],
      [400, 'ERR_INVALID_TRANSACTION'],
      [400, 'ERR_3DS_REQUIRED'],
      [401, 'ERR_AUTH_FAILED'],
      [403, 'ERR_AUTH_FAILED'],
      [404, 'ERR_NOT_FOUND'],
      [413, 'ERR_VALIDATION_FAILED'],
      [422, 'ERR_VALIDATION_FAILED'],
    ];
    for (const [status, code] of answers) {
      for (const replayable of both) {
        expect(
          shouldRetry(gatewayError(status, code), replayable),
          `${status} ${code} ${replayable}`,
        ).to.equal(false);
      }
    }
  });

  it('a connection that sent nothing (refused, DNS) is retried even for an unkeyed POST', () => {
    const refused = new GatewayNetworkError('connection', 'POST /api/v1/transactions: refused', true);
    expect(shouldRetry(refused, false)).to.equal(true);
    expect(shouldRetry(refused, true)).to.equal(true);
  });

  it('a timeout, a reset or a garbled answer is retried only for GETs and keyed writes', () => {
    const maybeSent = [
      new GatewayNetworkError('timeout', 'no answer in time', false),
      new GatewayNetworkError('connection', 'connection failed (ECONNRESET)', false),
      new GatewayNetworkError('malformed', 'HTTP 502 without the envelope', false),
    ];
    for (const error of maybeSent) {
      expect(shouldRetry(error, true), `${error.kind} replayable`).to.equal(true);
      expect(shouldRetry(error, false), `${error.kind} POST /transactions`).to.equal(false);
    }
  });

  it('anything that is not a gateway error (a bug, a rejected promise with no error) is not retried', () => {
    for (const error of [new Error('bug'), new TypeError('x is undefined'), undefined, null, 'text']) {
      expect(shouldRetry(error, true), String(error)).to.equal(false);
    }
  });
});

describe('client/retry: retryDelayMs', () => {
  const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5000 };

  it("honours the gateway's Retry-After, in seconds, whatever the attempt and jitter", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3600 }),
        fc.integer({ min: 1, max: 10 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (seconds, attempt, random) => {
          const error = gatewayError(429, 'ERR_RATE_LIMITED', { retryAfterSeconds: seconds });
          expect(retryDelayMs(policy, attempt, error, random)).to.equal(seconds * 1000);
        },
      ),
    );
  });

  it('is the jittered backoff when there is no Retry-After', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, random) => {
          const expected = backoffMs(policy, attempt, random);
          expect(retryDelayMs(policy, attempt, gatewayError(500, 'ERR_UNEXPECTED'), random)).to.equal(
            expected,
          );
          const inProgress = gatewayError(409, 'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS');
          expect(retryDelayMs(policy, attempt, inProgress, random)).to.equal(expected);
          const timeout = new GatewayNetworkError('timeout', 'no answer', false);
          expect(retryDelayMs(policy, attempt, timeout, random)).to.equal(expected);
        },
      ),
    );
    expect(retryDelayMs(policy, 2, gatewayError(500, 'ERR_UNEXPECTED'), 0.5)).to.equal(200);
  });
});

describe('client/errors: retryable', () => {
  it('is true for 429, 5xx, in-progress and the transient issuer codes; false for declines and 4xx', () => {
    expect(gatewayError(429, 'ERR_RATE_LIMITED').retryable).to.equal(true);
    expect(gatewayError(500, 'ERR_UNEXPECTED').retryable).to.equal(true);
    expect(gatewayError(502, 'ERR_GATEWAY_ERROR').retryable).to.equal(true);
    expect(gatewayError(409, 'ERR_IDEMPOTENT_REQUEST_IN_PROGRESS').retryable).to.equal(true);
    expect(gatewayError(400, 'ERR_CARD_ISSUER_UNAVAILABLE').retryable).to.equal(true);
    expect(gatewayError(400, 'ERR_CARD_SYSTEM_ERROR').retryable).to.equal(true);
    for (const [status, code] of [
      [400, 'ERR_CARD_DO_NOT_HONOR'],
      [400, 'ERR_CARD_FRAUD_SUSPECTED'],
      [400, 'ERR_DO_NOT_RETRY'],
      [409, 'ERR_DUPLICATE'],
      [409, 'ERR_IDEMPOTENCY_CONFLICT'],
      [422, 'ERR_VALIDATION_FAILED'],
      [404, 'ERR_NOT_FOUND'],
    ] as const) {
      expect(gatewayError(status, code).retryable, code).to.equal(false);
    }
  });

  it('keeps status, code, the validation errors and the data of the envelope', () => {
    const error = gatewayError(422, 'ERR_VALIDATION_FAILED', {
      errors: { amount: ['must be positive'] },
      data: null,
    });
    expect(error).to.be.instanceOf(Error);
    expect(error.name).to.equal('GatewayError');
    expect(error.status).to.equal(422);
    expect(error.code).to.equal('ERR_VALIDATION_FAILED');
    expect(error.details.errors).to.deep.equal({ amount: ['must be positive'] });
  });
});
