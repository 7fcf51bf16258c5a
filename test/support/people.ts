import { randomBytes } from 'node:crypto';
import type { TestKit } from './kit.js';

/**
 * A customer as a shop sends one, for the erasure tests: every personal field, each value unique to
 * this customer (a random tag in it), so a dump of the database either holds it or has forgotten it.
 */
export function person(label: string, n: number) {
  const tag = randomBytes(4).toString('hex');
  return {
    merchant_customer_id: `cus-${label}-${process.pid}-${n}-${tag}`,
    first_name: `Grace${tag}`,
    last_name: `Hopper${tag}`,
    email: `grace.${tag}@example.com`,
    phone: `+31 6 ${tag}`,
    address: `${tag} Analytical Lane 7`,
    city: `Arlington${tag}`,
    postal_code: `NW1 ${tag}`,
    country_code: 'GB',
    ip_address: `203.0.113.${10 + n}`,
  };
}
export type Person = ReturnType<typeof person>;

/** What an erasure must leave nowhere: every value but the country. */
export const traces = (p: Person): string[] =>
  Object.entries(p)
    .filter(([k]) => k !== 'country_code')
    .map(([, v]) => v);

/** The traces of `p` found in a dump of every table of the kit's database. */
export async function tracesFound(t: TestKit, p: Person): Promise<string[]> {
  const dump = (await t.dump()).toLowerCase();
  return traces(p).filter((v) => dump.includes(v.toLowerCase()));
}
