/**
 * When a failed delivery is tried again (issue 20): soon at first, then hourly, so an endpoint down
 * for an hour gets its events within minutes of coming back; given up three days after the event
 * (`failed`: a replay sends it again). Pure.
 */
const WAITS_MS = [5_000, 30_000, 2 * 60_000, 5 * 60_000, 15 * 60_000, 30 * 60_000];
const HOURLY_MS = 60 * 60_000;
export const GIVE_UP_MS = 3 * 24 * 60 * 60_000;

/** The next try after the `failures`-th failure (1 = the first), or null: given up. */
export function nextTryAt(failures: number, now: number, eventAt: number): number | null {
  const wait = WAITS_MS[failures - 1] ?? HOURLY_MS;
  const at = now + wait;
  return at - eventAt > GIVE_UP_MS ? null : at;
}
