/**
 * The kit's one way of writing a length of time, for people: `90s`, `15m`, `2h`, `7d`, `1h30m`. The
 * CLI's sandbox triggers read it (`sandbox advance 1h30m`), and so do settings that are lengths of
 * time a person picks (ORDER_TTL). Pure.
 */

export const DURATION_UNIT_SECONDS = { d: 86_400, h: 3600, m: 60, s: 1 } as const;

/** Days, hours, minutes, seconds: each at most once, in that order (`1h30m`, not `30m1h`). */
const DURATION = /^(?:(\d{1,9})d)?(?:(\d{1,9})h)?(?:(\d{1,9})m)?(?:(\d{1,9})s)?$/;

/** What a person reads when a duration is not one: the examples, and what was written. */
export const durationProblem = (text: string) =>
  `must be a duration such as 90s, 15m, 2h, 7d or 1h30m (got "${text}")`;

/**
 * `90s`, `15m`, `2h`, `7d`, `1h30m` (blanks around it ignored) -> seconds; null for anything else. A
 * bare number is refused: seconds or minutes? Zero reads as zero: each reader says whether it may be.
 */
export function readDuration(text: string): number | null {
  const trimmed = text.trim();
  const match = DURATION.exec(trimmed);
  if (!match || trimmed === '') return null;
  const [, d = '0', h = '0', m = '0', s = '0'] = match;
  const { d: day, h: hour, m: minute } = DURATION_UNIT_SECONDS;
  return Number(d) * day + Number(h) * hour + Number(m) * minute + Number(s);
}

/** Seconds as `readDuration` reads them, largest units first: 5400 -> `1h30m`, 0 -> `0s`. */
export function formatDuration(totalSeconds: number): string {
  let left = Math.max(0, Math.round(totalSeconds));
  let text = '';
  for (const [unit, size] of Object.entries(DURATION_UNIT_SECONDS)) {
    const n = Math.floor(left / size);
    left -= n * size;
    if (n > 0) text += `${n}${unit}`;
  }
  return text === '' ? '0s' : text;
}
