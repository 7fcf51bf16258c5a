/**
 * Seeded randomness for the chaos run: the same CHAOS_SEED gives the same mix of payments, amounts
 * and shuffles (the faults' timing still depends on the machine).
 */
export type Random = () => number;

/** mulberry32: a float in [0, 1) per call, from a 32-bit seed. */
export function seeded(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max]. */
export const between = (random: Random, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));

/** One of `choices`, each as likely as its weight. */
export function weighted<T>(random: Random, choices: readonly (readonly [T, number])[]): T {
  const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
  let left = random() * total;
  for (const [choice, weight] of choices) {
    left -= weight;
    if (left < 0) return choice;
  }
  return choices[choices.length - 1]![0];
}

/** Removes and returns a random element of `pool` (order is not kept: the pool is a bag). */
export function takeAny<T>(random: Random, pool: T[]): T | undefined {
  if (pool.length === 0) return undefined;
  const i = Math.floor(random() * pool.length);
  const taken = pool[i]!;
  pool[i] = pool[pool.length - 1]!;
  pool.pop();
  return taken;
}
