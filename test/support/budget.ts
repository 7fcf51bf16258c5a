import { type Priority, WINDOW_MS } from '../../src/client/budget.js';

/** A clock the tests move by hand, for a budget's injected `now`. */
export function manualNow(start = Date.UTC(2026, 10, 1, 12)) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
    set: (ms: number) => {
      t = ms;
    },
  };
}

export interface Admission {
  at: number;
  priority: Priority;
}

/**
 * The invariant of the shared budget, checked from the outside over admissions in the order they were
 * admitted (times never going back): in any 60 s window, the calls admitted up to and including the
 * window's last background admission number at most `backgroundPerMinute`. So background calls never
 * push a window past the limit; only foreground calls admitted after them can. It follows that a window
 * holds at most `backgroundPerMinute` background calls, and at most that many plus its foreground calls.
 *
 * Returns the largest such count over all windows. Windows ending at a background admission suffice:
 * any other window's count is at most that of the window ending at its last background admission.
 */
export function worstWindow(admissions: readonly Admission[]): number {
  let worst = 0;
  let lo = 0;
  for (let j = 0; j < admissions.length; j++) {
    const end = admissions[j]!;
    while (admissions[lo]!.at <= end.at - WINDOW_MS) lo++;
    if (end.priority !== 'background') continue;
    // Background admissions after j at the same instant end windows of their own, counted then.
    worst = Math.max(worst, j - lo + 1);
  }
  return worst;
}
