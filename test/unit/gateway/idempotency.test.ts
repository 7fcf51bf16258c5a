import { expect } from 'chai';
import fc from 'fast-check';
import {
  canonicalJson,
  IDEMPOTENCY_TTL_MS,
  IdempotencyStore,
} from '../../../src/gateway/domain/idempotency.js';

describe('idempotency store (pure)', () => {
  it('executes once, reports in-progress, then replays; another body conflicts', () => {
    const store = new IdempotencyStore();
    expect(store.begin('key', 'k1', 'A', 0)).to.deep.equal({ kind: 'execute' });
    expect(store.begin('key', 'k1', 'A', 1)).to.deep.equal({ kind: 'in_progress' });
    store.complete('key', 'k1', { status: 200, body: { ok: 1 } });
    expect(store.begin('key', 'k1', 'A', 2)).to.deep.equal({
      kind: 'replay',
      response: { status: 200, body: { ok: 1 } },
    });
    expect(store.begin('key', 'k1', 'B', 3)).to.deep.equal({ kind: 'conflict' });
  });

  it('scopes keys to the API key and forgets them after 24 hours', () => {
    const store = new IdempotencyStore();
    store.begin('key-a', 'k', 'A', 0);
    expect(store.begin('key-b', 'k', 'B', 0)).to.deep.equal({ kind: 'execute' });
    store.complete('key-a', 'k', { status: 200, body: null });
    expect(store.begin('key-a', 'k', 'B', IDEMPOTENCY_TTL_MS - 1)).to.deep.equal({ kind: 'conflict' });
    expect(store.begin('key-a', 'k', 'B', IDEMPOTENCY_TTL_MS)).to.deep.equal({ kind: 'execute' });
  });

  it('an abandoned key executes again', () => {
    const store = new IdempotencyStore();
    store.begin('key', 'k', 'A', 0);
    store.abandon('key', 'k');
    expect(store.begin('key', 'k', 'A', 0)).to.deep.equal({ kind: 'execute' });
  });

  it('property: canonical JSON ignores key order and nothing else', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(canonicalJson(reversed)).to.equal(canonicalJson(object));
        expect(JSON.parse(canonicalJson(object))).to.deep.equal(JSON.parse(JSON.stringify(object)));
      }),
    );
    expect(canonicalJson({ amount: 1 })).to.not.equal(canonicalJson({ amount: '1' }));
  });
});
