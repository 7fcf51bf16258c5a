import type { Sequelize } from 'sequelize';
import { createPool, createTransitionPool } from '../../src/infra/database.js';
import { createStore } from '../../src/merchant/store/index.js';
import type { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';

/** The kit's store over a migrated database, with the pools it opens (closed by the caller). */
export function storeOn(url: string, sequelize: Sequelize, clock: ManualClock, seed: number) {
  const pool = createPool(url);
  const transitionPool = createTransitionPool(url);
  const random = seededRandom(seed);
  const box = new SecretBox(Buffer.alloc(32, 3), random);
  return {
    store: createStore({ sequelize, pool, transitionPool, clock, random, box }),
    pool,
    transitionPool,
  };
}
