import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import {
  computeSignature,
  DEFAULT_TOLERANCE_SECONDS,
  generateSecret,
  SIGNATURE_HEADER,
  sign,
  type VerifyFailure,
  type VerifyOptions,
  type VerifyResult,
  verify,
} from '../../../src/shared/signature.js';

const NOW = 1_700_000_000;
const SECRET = 'whsec_test_secret';
const BODY = '{"id":"evt_1","type":"webhook.ping"}';

function expectFailure(result: VerifyResult, reason: VerifyFailure): string {
  expect(result.ok).to.equal(false);
  if (result.ok) return '';
  expect(result.reason).to.equal(reason);
  expect(result.message).to.be.a('string').and.not.equal('');
  return result.message;
}

function check(overrides: Partial<VerifyOptions>): VerifyResult {
  return verify({
    payload: BODY,
    header: sign(BODY, SECRET, NOW),
    secrets: [SECRET],
    nowSeconds: NOW,
    ...overrides,
  });
}

const body = fc.oneof(fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 }));
const secret = fc.string({ minLength: 1, maxLength: 60 });
const timestamp = fc.integer({ min: 0, max: 4_000_000_000 });
const tolerance = fc.integer({ min: 0, max: 3600 });

describe('shared/signature', () => {
  it('exports the header name and the default tolerance', () => {
    expect(SIGNATURE_HEADER).to.equal('X-Service-Signature');
    expect(DEFAULT_TOLERANCE_SECONDS).to.equal(300);
  });

  describe('computeSignature and sign', () => {
    it('matches known-answer vectors computed with crypto.createHmac', () => {
      // node -e: createHmac('sha256', 'whsec_test_secret').update('1700000000.' + BODY).digest('hex')
      expect(computeSignature(BODY, SECRET, NOW)).to.equal(
        'b049236fc7bc95691aee13b2f77b1d17a4b2f7a177e6ed9d68d87760bab6538c',
      );
      // A non-ASCII secret is keyed as UTF-8, and a binary body is signed byte for byte.
      expect(computeSignature(new Uint8Array([0, 255, 10, 200]), 'sécret', NOW)).to.equal(
        '2f31eec0e2f62217f033cc3d2a4d42101087207c6492d93764f3947cfd047ad7',
      );
      expect(sign(BODY, SECRET, NOW)).to.equal(
        't=1700000000,v1=b049236fc7bc95691aee13b2f77b1d17a4b2f7a177e6ed9d68d87760bab6538c',
      );
    });

    it('signs a string body as its UTF-8 bytes', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 100 }), secret, timestamp, (text, key, t) => {
          const fromBytes = computeSignature(new TextEncoder().encode(text), key, t);
          expect(computeSignature(text, key, t)).to.equal(fromBytes);
          const reference = createHmac('sha256', Buffer.from(key, 'utf8'))
            .update(`${t}.${text}`)
            .digest('hex');
          expect(fromBytes).to.equal(reference);
        }),
      );
    });

    it('refuses a timestamp that is not a non-negative integer', () => {
      for (const t of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        expect(() => sign(BODY, SECRET, t), String(t)).to.throw(RangeError);
      }
    });
  });

  describe('verify', () => {
    it('accepts a freshly signed body', () => {
      expect(check({})).to.deep.equal({ ok: true, timestamp: NOW, secretIndex: 0 });
    });

    it('round-trips sign then verify for random bodies, secrets and timestamps within tolerance', () => {
      fc.assert(
        fc.property(
          body,
          secret,
          timestamp,
          tolerance,
          fc.double({ min: -1, max: 1, noNaN: true }),
          (p, k, t, tol, f) => {
            const nowSeconds = t + Math.trunc(f * tol);
            const result = verify({
              payload: p,
              header: sign(p, k, t),
              secrets: [k],
              nowSeconds,
              toleranceSeconds: tol,
            });
            expect(result).to.deep.equal({ ok: true, timestamp: t, secretIndex: 0 });
          },
        ),
      );
    });

    it('fails with signature_mismatch when any one byte of the body is flipped', () => {
      fc.assert(
        fc.property(
          fc.uint8Array({ minLength: 1, maxLength: 200 }),
          secret,
          fc.nat(),
          fc.integer({ min: 1, max: 255 }),
          (p, k, at, mask) => {
            const tampered = Uint8Array.from(p);
            const index = at % p.length;
            tampered[index] = (tampered[index] ?? 0) ^ mask;
            const result = verify({
              payload: tampered,
              header: sign(p, k, NOW),
              secrets: [k],
              nowSeconds: NOW,
            });
            expectFailure(result, 'signature_mismatch');
          },
        ),
      );
    });

    it('fails with the right reason for a timestamp outside tolerance either way', () => {
      fc.assert(
        fc.property(
          body,
          secret,
          tolerance,
          fc.integer({ min: 1, max: 1_000_000 }),
          fc.boolean(),
          (p, k, tol, by, old) => {
            const t = NOW + (old ? -(tol + by) : tol + by);
            const result = verify({
              payload: p,
              header: sign(p, k, t),
              secrets: [k],
              nowSeconds: NOW,
              toleranceSeconds: tol,
            });
            expectFailure(result, old ? 'timestamp_too_old' : 'timestamp_too_new');
          },
        ),
      );
    });

    it('uses 300 seconds both ways by default, inclusive', () => {
      for (const t of [NOW - 300, NOW + 300]) {
        expect(check({ header: sign(BODY, SECRET, t) }).ok, String(t)).to.equal(true);
      }
      expectFailure(check({ header: sign(BODY, SECRET, NOW - 301) }), 'timestamp_too_old');
      expectFailure(check({ header: sign(BODY, SECRET, NOW + 301) }), 'timestamp_too_new');
    });

    it('checks the timestamp before the signature', () => {
      const stale = `t=${NOW - 1000},v1=${'0'.repeat(64)}`;
      expectFailure(check({ header: stale }), 'timestamp_too_old');
    });

    it('accepts when one of several v1 values matches one of several secrets, and reports which secret', () => {
      fc.assert(
        fc.property(
          fc.uniqueArray(secret, { minLength: 2, maxLength: 5 }),
          fc.nat(),
          fc.array(fc.stringMatching(/^[0-9a-f]{64}$/), { minLength: 1, maxLength: 4 }),
          fc.nat(),
          body,
          (secrets, pick, decoys, position, p) => {
            const secretIndex = pick % secrets.length;
            const good = computeSignature(p, secrets[secretIndex]!, NOW);
            const v1s = [...decoys];
            v1s.splice(position % (decoys.length + 1), 0, good);
            const header = [`t=${NOW}`, ...v1s.map((v) => `v1=${v}`)].join(',');
            const result = verify({ payload: p, header, secrets, nowSeconds: NOW });
            expect(result).to.deep.equal({ ok: true, timestamp: NOW, secretIndex });
          },
        ),
      );
    });

    it('rejects a body that was parsed and re-serialised, and says why', () => {
      fc.assert(
        fc.property(
          fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue(), { minKeys: 1 }),
          secret,
          (value, k) => {
            const raw = JSON.stringify(value, null, 2);
            const reserialised = JSON.stringify(JSON.parse(raw));
            const result = verify({
              payload: reserialised,
              header: sign(raw, k, NOW),
              secrets: [k],
              nowSeconds: NOW,
            });
            const message = expectFailure(result, 'signature_mismatch');
            expect(message).to.include('raw request body bytes exactly as received');
            expect(message).to.include('parsed and re-serialised');
          },
        ),
      );
    });

    it('never puts a secret or the expected signature in a message', () => {
      const expected = computeSignature(BODY, SECRET, NOW);
      const headers = [
        `t=${NOW},v1=${'a'.repeat(64)}`,
        `t=${NOW - 1000},v1=${expected}`,
        `t=${NOW + 1000},v1=${expected}`,
        `t=${NOW}`,
        'garbage',
      ];
      for (const header of headers) {
        const result = check({ header, payload: `${BODY} ` });
        expect(result.ok).to.equal(false);
        if (!result.ok) {
          expect(result.message).not.to.include(SECRET);
          expect(result.message).not.to.include(expected);
          expect(result.message).not.to.include(computeSignature(`${BODY} `, SECRET, NOW));
        }
      }
    });

    it('tolerates whitespace around parts, ignores unknown schemes and accepts upper-case hex', () => {
      const v1 = computeSignature(BODY, SECRET, NOW);
      const headers = [
        ` t = ${NOW} , v1 = ${v1} `,
        `v0=deadbeef,t=${NOW},v1=${v1}`,
        `t=${NOW},v2=${'b'.repeat(64)},v1=${v1}`,
        `v1=${v1},t=${NOW}`,
        `t=${NOW},v1=${v1.toUpperCase()}`,
        `t=${NOW},v1=nothex,v1=${'0'.repeat(63)},v1=${v1}`,
      ];
      for (const header of headers) {
        expect(check({ header }), header).to.deep.equal({ ok: true, timestamp: NOW, secretIndex: 0 });
      }
    });

    it('reports a missing header', () => {
      for (const header of [null, undefined, '', '   ']) expectFailure(check({ header }), 'missing_header');
    });

    it('reports a malformed header', () => {
      const v1 = computeSignature(BODY, SECRET, NOW);
      const headers = [
        'garbage',
        `v1=${v1}`,
        `t=${NOW}`,
        `t=${NOW},v0=${v1}`,
        `t=${NOW},t=${NOW},v1=${v1}`,
        `t=-1,v1=${v1}`,
        `t=1.5,v1=${v1}`,
        `t=1e9,v1=${v1}`,
        `t=,v1=${v1}`,
        `t=abc,v1=${v1}`,
        `t=99999999999999999999,v1=${v1}`,
        `t=${NOW},v1=${v1},`,
        `t=${NOW};v1=${v1}`,
        `=${NOW},v1=${v1}`,
      ];
      for (const header of headers) {
        const result = check({ header });
        expect(result.ok, header).to.equal(false);
        if (!result.ok) expect(result.reason, header).to.equal('malformed_header');
      }
    });

    it('reports no_secrets when nothing is configured', () => {
      expectFailure(check({ secrets: [] }), 'no_secrets');
    });

    it('rejects a signature made with another secret or a malformed v1', () => {
      expectFailure(check({ secrets: ['whsec_other'] }), 'signature_mismatch');
      expectFailure(check({ header: `t=${NOW},v1=${'0'.repeat(64)}` }), 'signature_mismatch');
      expectFailure(check({ header: `t=${NOW},v1=short` }), 'signature_mismatch');
      expectFailure(check({ header: `t=${NOW},v1=` }), 'signature_mismatch');
      // The signature covers t, so moving t within tolerance breaks it.
      const v1 = computeSignature(BODY, SECRET, NOW);
      expectFailure(check({ header: `t=${NOW + 1},v1=${v1}` }), 'signature_mismatch');
    });
  });

  describe('generateSecret', () => {
    it('is whsec_ and base64url of 32 bytes from the injected source', () => {
      const sizes: number[] = [];
      const secretFromCounter = generateSecret((size) => {
        sizes.push(size);
        return Uint8Array.from({ length: size }, (_, i) => i);
      });
      expect(sizes).to.deep.equal([32]);
      expect(secretFromCounter).to.equal('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8');
      expect(generateSecret((size) => new Uint8Array(size).fill(0xfb))).to.equal(
        'whsec_-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_s',
      );
    });

    it('round-trips the bytes for any source', () => {
      fc.assert(
        fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
          const value = generateSecret(() => bytes);
          expect(value).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
          expect([...Buffer.from(value.slice('whsec_'.length), 'base64url')]).to.deep.equal([...bytes]);
        }),
      );
    });

    it('refuses a source that returns the wrong number of bytes', () => {
      expect(() => generateSecret(() => new Uint8Array(16))).to.throw(RangeError);
    });
  });
});
