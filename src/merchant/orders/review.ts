/** Adds a review reason once: the same problem seen again (a redelivery, a later poll) is not repeated. */
export function withReason(existing: string | null, reason: string): string {
  if (!existing) return reason;
  return existing.split('; ').includes(reason) ? existing : `${existing}; ${reason}`.slice(0, 512);
}
