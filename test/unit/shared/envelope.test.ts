import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { failureEnvelope, successEnvelope } from '../../../src/shared/envelope.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the merchant envelope (shared/envelope.ts)', () => {
  it('a success: code empty, the data, no request id', () => {
    expect(JSON.stringify(successEnvelope({ id: 'o' }))).to.equal(
      '{"success":true,"message":"","code":"","data":{"id":"o"}}',
    );
    expect(JSON.stringify(successEnvelope(null, 'Received.'))).to.equal(
      '{"success":true,"message":"Received.","code":"","data":null}',
    );
  });

  it('an error: data null unless given, the field errors when there are some, then the request id', () => {
    expect(JSON.stringify(failureEnvelope('NOT_FOUND', 'Not found.', { requestId: 'r-1' }))).to.equal(
      '{"success":false,"message":"Not found.","code":"NOT_FOUND","data":null,"request_id":"r-1"}',
    );
    expect(
      failureEnvelope('VALIDATION_FAILED', 'The request is not valid.', {
        data: { a: 1 },
        errors: { amount: ['is required'] },
        requestId: null,
      }),
    ).to.deep.equal({
      success: false,
      message: 'The request is not valid.',
      code: 'VALIDATION_FAILED',
      data: { a: 1 },
      errors: { amount: ['is required'] },
      request_id: null,
    });
    // The readiness probe's 503 is a state, not a request's error: no request id at all.
    expect(failureEnvelope('NOT_READY', 'not ready', { data: {} })).to.not.have.property('request_id');
  });

  it('is the only writer of the envelope on the merchant side and in the adapters', () => {
    // An answer body written by hand (`success: true, message, ...`) would drift from this one.
    const handWritten = /\bsuccess:\s*(true|false|ready)\b/;
    const writers = [...sources(join(ROOT, 'src/merchant')), ...sources(join(ROOT, 'src/infra'))]
      .filter((file) => handWritten.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(writers).to.deep.equal([]);
  });
});
