import { expect } from 'chai';
import fc from 'fast-check';
import { randomUuid, seededRandom } from '../../../src/shared/ids.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('shared/ids: randomUuid', () => {
  it('a seeded source gives the same UUID v4 twice; another seed another one', () => {
    const once = randomUuid(seededRandom(7));
    expect(once).to.match(UUID_V4);
    expect(randomUuid(seededRandom(7))).to.equal(once);
    expect(randomUuid(seededRandom(8)))
      .to.match(UUID_V4)
      .and.not.equal(once);
  });

  it('draws 16 bytes and keeps all but the version and variant bits', () => {
    const bytes = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
    expect(randomUuid(() => bytes.slice())).to.equal('00112233-4455-4677-8899-aabbccddeeff');
    expect(randomUuid(() => new Uint8Array(16).fill(0xff))).to.equal('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(randomUuid(() => new Uint8Array(16))).to.equal('00000000-0000-4000-8000-000000000000');
  });

  it('property: any 16 bytes make a well-formed UUID v4, and the source is not written to', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const copy = bytes.slice();
        expect(randomUuid(() => bytes)).to.match(UUID_V4);
        expect(bytes).to.deep.equal(copy);
      }),
    );
  });
});
