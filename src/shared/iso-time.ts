/**
 * A point in time typed by a person (a query's `from`, a CLI's `--since`): a date `YYYY-MM-DD` (its
 * midnight, UTC) or an ISO 8601 date-time with `Z` or an offset. Every field must be real: Date.parse
 * rolls 2026-02-30 over to March 2 and 24:00 to the next day, so a typo would quietly move the range.
 */
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2})))?$/;

/** The instant `text` names, or null when it is not such a date or time, or names no real one. */
export function parseIsoTime(text: string): Date | null {
  const m = ISO_TIME.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = m[9] === undefined ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  if (Number(m[10] ?? 0) > 23 || Number(m[11] ?? 0) > 59) return null;
  // setUTCFullYear, not Date.UTC: the latter reads the years 0-99 as 1900-1999.
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  if (at.getUTCMonth() !== month - 1 || at.getUTCDate() !== day) return null; // 2026-02-30, 2026-11-31
  at.setUTCHours(hour, minute - offset, second, millis);
  return at;
}
