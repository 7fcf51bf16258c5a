import { expect } from 'chai';
import {
  type Answer,
  card,
  INACTIVE_KEY,
  MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';

/** gateway-api.md, Response envelope; sandbox.md section 9: every answer is the envelope with the rate header. */
const ENVELOPE_FIELDS = ['success', 'message', 'code', 'data', 'errors'];
const MIB = 1024 * 1024;

function expectEnvelope(answer: Answer, status: number, code: string): void {
  const context = `${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, context).to.equal(status);
  expect(answer.headers.get('content-type') ?? '', context).to.match(/^application\/json/);
  const body = answer.body as Record<string, unknown>;
  expect(body, context).to.be.an('object');
  expect(Object.keys(body), context).to.include.members(['success', 'message', 'code', 'data']);
  for (const field of Object.keys(body))
    expect(ENVELOPE_FIELDS, `unexpected field ${field}`).to.include(field);
  expect(body.success, context).to.equal(status < 400);
  expect(body.message, context).to.be.a('string').and.not.equal('');
  expect(body.code, context).to.equal(code);
  expect(body.data === null || typeof body.data === 'object', context).to.equal(true);
  if (body.errors !== undefined) {
    expect(body.errors, context).to.be.an('object');
    for (const messages of Object.values(body.errors as Record<string, unknown>)) {
      expect(messages, context).to.be.an('array').that.is.not.empty;
      for (const m of messages as unknown[]) expect(m, context).to.be.a('string');
    }
  }
  expect(answer.headers.get('x-ratelimit-remaining'), `X-RateLimit-Remaining on ${context}`).to.match(
    /^\d+$/,
  );
}

function expectBodyError(answer: Answer, status = 422): void {
  expectEnvelope(answer, status, 'ERR_VALIDATION_FAILED');
  expect(answer.body.errors?.body, answer.text).to.be.an('array').that.is.not.empty;
}

describe('gateway: response envelope (gateway-api.md Response envelope; sandbox.md section 9)', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.close();
  });

  it('a success is the envelope with success true, code "" and the payload in data, plus X-RateLimit-Remaining', async () => {
    const answer = await gw.call('POST', '/api/v1/transactions', { body: transactionBody() });
    expectEnvelope(answer, 200, '');
    expect(answer.body.errors).to.equal(undefined);
    expect(answer.body.data.status).to.equal('captured');
    expect(answer.headers.get('x-ratelimit-remaining')).to.equal('999');
  });

  describe('unknown path -> 404 ERR_NOT_FOUND', () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nope'],
      ['POST', '/api/v1/nope'],
      ['GET', '/'],
      ['GET', '/definitely/not/here'],
      ['DELETE', '/api/v1/transactions'],
      ['GET', '/sandbox/nothing'],
    ] as const) {
      it(`${method} ${path} with a key`, async () => {
        const answer = await gw.call(method, path);
        expectEnvelope(answer, 404, 'ERR_NOT_FOUND');
        expect(answer.body.data).to.equal(null);
        expect(answer.body.errors).to.equal(undefined);
      });
      it(`${method} ${path} without a key`, async () => {
        const answer = await gw.call(method, path, { key: null });
        expectEnvelope(answer, 404, 'ERR_NOT_FOUND');
        expect(answer.body.data).to.equal(null);
      });
    }

    it('a missing transaction is the same 404 envelope', async () => {
      expectEnvelope(await gw.call('GET', '/api/v1/transactions/999999/status'), 404, 'ERR_NOT_FOUND');
    });
  });

  describe('bodies that are not a JSON object -> 422 ERR_VALIDATION_FAILED with errors.body', () => {
    for (const [label, rawBody] of [
      ['malformed JSON', '{"amount": 12.34, "currency": '],
      ['malformed JSON (single quotes)', "{'amount': 1}"],
      ['trailing garbage', '{"amount": 1} x'],
      ['a JSON array', '[{"amount": 12.34}]'],
      ['an empty JSON array', '[]'],
      ['a JSON string', '"hello"'],
      ['JSON null', 'null'],
      ['a JSON number', '42'],
      ['JSON true', 'true'],
    ] as const) {
      it(`${label} on POST /api/v1/transactions`, async () => {
        const before = gw.gateway.deps.state.transactions.size;
        const answer = await gw.call('POST', '/api/v1/transactions', { rawBody });
        expectBodyError(answer);
        expect(gw.gateway.deps.state.transactions.size).to.equal(before);
      });
    }

    it('malformed JSON on capture and on 3DS verify too', async () => {
      const auth = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ transaction_type: 'auth' }),
      });
      expect(auth.status).to.equal(200);
      expectBodyError(
        await gw.call('POST', `/api/v1/transactions/${auth.body.data.id}/capture`, { rawBody: '{"amount":' }),
      );
      expectBodyError(await gw.call('POST', '/api/v1/3ds/verify', { rawBody: '[1,2]' }));
      expectBodyError(await gw.call('POST', '/sandbox/clock/advance', { rawBody: 'null' }));
    });

    it('a field-level validation failure names the field, not body', async () => {
      const answer = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ amount: 12.345 }),
      });
      expectEnvelope(answer, 422, 'ERR_VALIDATION_FAILED');
      expect(answer.body.errors.amount).to.be.an('array').that.is.not.empty;
    });
  });

  describe('request size', () => {
    it('a body over 1 MiB -> 413 with code ERR_VALIDATION_FAILED, as an envelope', async () => {
      const rawBody = `{"pad":"${'x'.repeat(MIB)}"}`;
      expect(Buffer.byteLength(rawBody)).to.be.greaterThan(MIB);
      const before = gw.gateway.deps.state.transactions.size;
      const answer = await gw.call('POST', '/api/v1/transactions', { rawBody });
      expectEnvelope(answer, 413, 'ERR_VALIDATION_FAILED');
      expect(gw.gateway.deps.state.transactions.size).to.equal(before);
    });

    it('a chunked body over 1 MiB (no Content-Length) -> 413 too', async () => {
      const encoder = new TextEncoder();
      const chunk = encoder.encode('x'.repeat(64 * 1024));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(encoder.encode('{"pad":"'));
          if (sent > MIB) {
            controller.enqueue(encoder.encode('"}'));
            controller.close();
            return;
          }
          controller.enqueue(chunk);
          sent += chunk.length;
        },
      });
      const res = await fetch(`${gw.url}/api/v1/transactions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      const text = await res.text();
      expectEnvelope(
        { status: res.status, headers: res.headers, body: JSON.parse(text), text },
        413,
        'ERR_VALIDATION_FAILED',
      );
    });

    it('exactly 1 MiB + 1 byte is refused, exactly 1 MiB is read', async () => {
      const sized = (bytes: number) => {
        const shell = '{"amount":12.34,"currency":"EUR","pad":""}';
        return `{"amount":12.34,"currency":"EUR","pad":"${'x'.repeat(bytes - shell.length)}"}`;
      };
      expect(Buffer.byteLength(sized(MIB))).to.equal(MIB);
      const over = await gw.call('POST', '/api/v1/transactions', { rawBody: sized(MIB + 1) });
      expectEnvelope(over, 413, 'ERR_VALIDATION_FAILED');
      const exact = await gw.call('POST', '/api/v1/transactions', { rawBody: sized(MIB) });
      // Read and validated (missing fields), not refused for its size.
      expectEnvelope(exact, 422, 'ERR_VALIDATION_FAILED');
      expect(exact.body.errors.body).to.equal(undefined);
    });
  });

  describe('other failures are envelopes too', () => {
    it('401 without a key: ERR_AUTH_FAILED, data null, with X-RateLimit-Remaining', async () => {
      const answer = await gw.call('POST', '/api/v1/transactions', { key: null, body: transactionBody() });
      expectEnvelope(answer, 401, 'ERR_AUTH_FAILED');
      expect(answer.body.data).to.equal(null);
      expect(answer.body.errors).to.equal(undefined);
    });

    it('403 for an inactive key', async () => {
      expectEnvelope(
        await gw.call('GET', '/api/v1/transactions/1/status', { key: INACTIVE_KEY }),
        403,
        'ERR_AUTH_FAILED',
      );
    });

    it('400 for a partner without merchant_id', async () => {
      expectEnvelope(
        await gw.call('POST', '/api/v1/transactions', { key: PARTNER_KEY, body: transactionBody() }),
        400,
        'ERR_AUTH_FAILED',
      );
    });

    it('400 decline carries the failed record in data', async () => {
      const answer = await gw.call('POST', '/api/v1/transactions', {
        body: transactionBody({ card: card('4000000000000002') }),
      });
      expectEnvelope(answer, 400, 'ERR_CARD_DO_NOT_HONOR');
      expect(answer.body.data.status).to.equal('failed');
    });

    it('409 duplicate reference carries data.transaction_id', async () => {
      const body = transactionBody();
      const first = await gw.call('POST', '/api/v1/transactions', { body });
      const second = await gw.call('POST', '/api/v1/transactions', { body });
      expectEnvelope(second, 409, 'ERR_DUPLICATE');
      expect(second.body.data.transaction_id).to.equal(first.body.data.id);
    });
  });
});

describe('gateway: an unexpected error shows no internals', () => {
  // Triggered through the gateway's own injected dependency (the sleep seam used for latency):
  // a dependency failing mid-request is the real unexpected-error path, not a hand-built answer.
  const SECRET = 'internal-detail-/srv/secret/path.ts:42';
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      sleep: async () => {
        throw new TypeError(SECRET);
      },
    });
  });
  after(async () => {
    await gw.close();
  });

  it('answers 500 ERR_UNEXPECTED with a generic message, no stack, no error text', async () => {
    const auth = await gw.call('POST', '/api/v1/transactions', {
      body: transactionBody({ transaction_type: 'auth' }),
    });
    expect(auth.status).to.equal(200);
    gw.gateway.controls.setLatency('capture', 5);
    const answer = await gw.call('POST', `/api/v1/transactions/${auth.body.data.id}/capture`, {
      body: { amount: 12.34 },
      headers: { 'Idempotency-Key': 'boom-1' },
    });
    expectEnvelope(answer, 500, 'ERR_UNEXPECTED');
    expect(answer.body.data).to.equal(null);
    expect(answer.body.errors).to.equal(undefined);
    expect(answer.text).to.not.include(SECRET);
    expect(answer.text).to.not.include('TypeError');
    expect(answer.text).to.not.match(/\bat \S+ \(|\.ts:\d+|node_modules|\/src\//);
    // It was logged for the operator instead.
    expect(gw.logs.some((line) => line.includes(SECRET))).to.equal(true);
    // And the auth was not captured.
    expect(gw.gateway.deps.state.transactions.get(auth.body.data.id)?.status).to.equal('auth');
  });
});
