/** Adds a review reason once: the same problem seen again (a redelivery, a later poll) is not repeated. */
export function withReason(existing: string | null, reason: string): string {
  if (!existing) return reason;
  return existing.split('; ').includes(reason) ? existing : `${existing}; ${reason}`.slice(0, 512);
}

/** The reasons of a `; `-joined list (a review reason, or the reasons a person resolved). */
const reasonsOf = (list: string | null | undefined) => (list ?? '').split('; ').filter(Boolean);

/** Whether a person resolved this reason on the order already (issue, part 3). */
export function wasResolved(resolved: string | null | undefined, reason: string): boolean {
  return reasonsOf(resolved).includes(reason);
}

/**
 * The resolved reasons after a person resolved `cleared` (the review reason they cleared): each
 * reason once, the oldest dropped first should the list outgrow its column.
 */
export function withResolved(resolved: string | null, cleared: string, max = 1024): string | null {
  const list = reasonsOf(resolved);
  for (const reason of reasonsOf(cleared)) if (!list.includes(reason)) list.push(reason);
  while (list.length > 1 && list.join('; ').length > max) list.shift();
  const joined = list.join('; ').slice(0, max);
  return joined === '' ? null : joined;
}

/**
 * What a person can say of a flagged order when they clear it (POST /orders/{id}/review):
 * `accepted` the money stands as the gateway has it; `refunded` what did not belong was given back;
 * `corrected` put right another way (money attached, a capture redone, the order amended); `written_off`
 * a loss the shop accepts; `false_alarm` nothing was wrong.
 */
export const REVIEW_RESOLUTIONS = [
  'accepted',
  'refunded',
  'corrected',
  'written_off',
  'false_alarm',
] as const;
export type ReviewResolution = (typeof REVIEW_RESOLUTIONS)[number];
