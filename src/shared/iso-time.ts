import { z } from 'zod';

/**
 * A point in time typed by a person (a query's `from`, a CLI's `--since`): a date `YYYY-MM-DD` (its
 * midnight, UTC) or an ISO 8601 date-time with `Z` or an offset, to the minute or finer. zod's ISO
 * formats check that every field is real: Date.parse alone rolls 2026-02-30 over to March 2 and 24:00
 * to the next day, so a typo would quietly move the range.
 */
const ISO_TIME = z.union([
  z.iso.date(),
  z.iso.datetime({ offset: true }),
  z.iso.datetime({ offset: true, precision: -1 }),
]);

/** The instant `text` names, or null when it is not such a date or time, or names no real one. */
export function parseIsoTime(text: string): Date | null {
  return ISO_TIME.safeParse(text).success ? new Date(text) : null;
}
