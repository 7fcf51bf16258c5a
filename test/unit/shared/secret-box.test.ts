import { expect } from 'chai';
import { seededRandom } from '../../../src/shared/ids.js';
import { NotSealedHere, SecretBox } from '../../../src/shared/secret-box.js';

describe('shared: the secret box (AES-256-GCM at rest) and its key rotation', () => {
  const A = Buffer.alloc(32, 1);
  const B = Buffer.alloc(32, 2);
  const C = Buffer.alloc(32, 3);
  const random = seededRandom(5);

  it('opens what it sealed, only with the same purpose (aad)', () => {
    const box = new SecretBox(A, random);
    const sealed = box.seal('whsec_x', 'webhook-secret');
    expect(sealed).to.match(/^v1\./);
    expect(sealed).to.not.contain('whsec_x');
    expect(box.open(sealed, 'webhook-secret')).to.equal('whsec_x');
    expect(() => box.open(sealed, 'saved-card:card_1')).to.throw(NotSealedHere);
  });

  it('another key opens nothing it did not seal; nor does an altered value', () => {
    const sealed = new SecretBox(A, random).seal('whsec_x');
    expect(() => new SecretBox(B, random).open(sealed)).to.throw(NotSealedHere, /none of the keys/);
    const [v, iv, tag, body] = sealed.split('.') as [string, string, string, string];
    // The first character: the last may carry only padding bits.
    const flipped = `${body.startsWith('A') ? 'B' : 'A'}${body.slice(1)}`;
    expect(() => new SecretBox(A, random).open([v, iv, tag, flipped].join('.'))).to.throw(NotSealedHere);
    expect(() => new SecretBox(A, random).open('whsec_x')).to.throw(NotSealedHere, /not a sealed secret/);
  });

  it('with previous keys: what they sealed opens, and is sealed again under the current key alone', () => {
    const old = new SecretBox(A, random).seal('tok_visa', 'saved-card:card_1');
    const rotated = new SecretBox(B, random, [C, A]);
    expect(rotated.open(old, 'saved-card:card_1')).to.equal('tok_visa');
    const again = rotated.resealed(old, 'saved-card:card_1');
    expect(again).to.be.a('string');
    expect(new SecretBox(B, random).open(again!, 'saved-card:card_1'), 'the current key alone').to.equal(
      'tok_visa',
    );
    expect(() => new SecretBox(A, random).open(again!, 'saved-card:card_1')).to.throw(NotSealedHere);
    expect(rotated.resealed(again!, 'saved-card:card_1'), 'already under the current key').to.equal(null);
    expect(() => rotated.resealed(old, 'saved-card:card_2'), 'the purpose still binds').to.throw(
      NotSealedHere,
    );
  });

  it('opens() tells without throwing: true for a key it holds, false for another key or purpose', () => {
    const sealed = new SecretBox(A, random).seal('whsec_z', 'webhook-secret');
    expect(new SecretBox(A, random).opens(sealed, 'webhook-secret')).to.equal(true);
    expect(new SecretBox(B, random, [A]).opens(sealed, 'webhook-secret')).to.equal(true);
    expect(new SecretBox(B, random).opens(sealed, 'webhook-secret')).to.equal(false);
    expect(new SecretBox(A, random).opens(sealed, 'other')).to.equal(false);
    expect(new SecretBox(A, random).opens('garbage')).to.equal(false);
  });

  it('seals new values under the current key only', () => {
    const sealed = new SecretBox(B, random, [A]).seal('whsec_y');
    expect(() => new SecretBox(A, random).open(sealed)).to.throw(NotSealedHere);
    expect(new SecretBox(B, random).open(sealed)).to.equal('whsec_y');
  });

  it('refuses a key of another length, current or previous', () => {
    expect(() => new SecretBox(Buffer.alloc(16), random)).to.throw(RangeError);
    expect(() => new SecretBox(A, random, [Buffer.alloc(31)])).to.throw(RangeError);
  });
});
