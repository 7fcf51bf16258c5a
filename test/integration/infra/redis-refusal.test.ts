import { createServer } from 'node:net';
import { expect } from 'chai';
import { redisRefusal } from '../../../src/infra/redis.js';
import { freePort } from '../../support/process.js';

/** Start-up's look at REDIS_URL, against the real Redis: a refusal stops the kit, silence does not. */
describe('infra: REDIS_URL checked at start', () => {
  it('a Redis that answers and accepts: nothing to say', async () => {
    expect(await redisRefusal('redis://127.0.0.1:6379/5')).to.equal(null);
  });

  it('a database index beyond its count, or a user it does not know: the refusal, in its words', async () => {
    expect((await redisRefusal('redis://127.0.0.1:6379/99'))?.line()).to.equal(
      'REDIS_URL: Redis refuses it (ERR DB index is out of range)',
    );
    const wrongUser = await redisRefusal('redis://nobody:secret-pw@127.0.0.1:6379/0');
    expect(wrongUser?.line()).to.match(/^REDIS_URL: Redis refuses it \(WRONGPASS /);
    expect(wrongUser?.line()).to.not.contain('secret-pw');
  });

  it('no Redis there (yet): nothing to say; the kit starts without it', async () => {
    expect(await redisRefusal(`redis://127.0.0.1:${await freePort()}/0`)).to.equal(null);
  });

  it('something that is not Redis answering there: named as such', async () => {
    // Speaks first, as a database server's greeting does, in what is no Redis reply.
    const server = createServer((socket) => socket.end('\x4a\x00\x00\x00\x0a5.5.5-10.11.6-MariaDB'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      expect((await redisRefusal(`redis://127.0.0.1:${port}/0`))?.line()).to.match(
        /^REDIS_URL: what answers at that address does not speak Redis/,
      );
    } finally {
      server.close();
    }
  });
});
