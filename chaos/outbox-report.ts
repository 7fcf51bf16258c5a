import type { OutboxLook, OutboxRun } from './outbox-verdict.js';

/**
 * The outbox part's table, markdown as chaos/report.ts prints the storm's (it goes into
 * docs/development.md as printed).
 */

/** What the run did, for the table: the payments, the outage, the kill. */
export interface OutboxFacts {
  orders: number;
  /** Stories a phase cut short (an auth lapsed under the moved clock, a call cut by the SIGKILL). */
  cutShort: number;
  /**
   * Sandbox minutes the endpoint answered 500, then refused connections, then hung (took requests and
   * never answered, until the SIGKILL); and the real seconds of all three.
   */
  down: { errorMinutes: number; refuseMinutes: number; hangMinutes: number; wallSeconds: number };
  /** From the SIGKILL until the dispatcher's process answered again. */
  restartSeconds: number;
  /** The kit's tries of the endpoint's deliveries, by what they came to (order_event_attempts). */
  tries: Record<string, number>;
  /** Minutes the run moved the sandbox's clock on, in all. */
  advancedMinutes: number;
}

const n = (value: number) => value.toLocaleString('en-US');
const counted = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, count]) => count > 0)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([what, count]) => `${n(count)} ${what}`)
    .join(', ');

export function outboxTable(look: OutboxLook, run: OutboxRun, facts: OutboxFacts): string {
  const o = look.outcomes;
  const d = facts.down;
  const tries = Object.values(facts.tries).reduce((sum, count) => sum + count, 0);
  const rows: [string, string][] = [
    ['orders', `${n(facts.orders)} (${n(facts.cutShort)} stories cut short by a lapse or the SIGKILL)`],
    ['order events the kit wrote', `${n(look.events)}: ${counted(look.byType)}`],
    [
      'the endpoint down',
      `${n(d.errorMinutes + d.refuseMinutes + d.hangMinutes)} min of sandbox clock (${n(d.errorMinutes)} answering 500, ` +
        `${n(d.refuseMinutes)} refusing connections, ${n(d.hangMinutes)} taking requests and never answering), ` +
        `${d.wallSeconds.toFixed(0)} s real, payments going on`,
    ],
    [
      "the dispatcher's process SIGKILLed mid-delivery",
      `${n(run.heldAtKill)} deliveries held open by the endpoint (taken, unanswered); up again in ${facts.restartSeconds.toFixed(1)} s`,
    ],
    [
      'requests to the endpoint',
      `${n(look.requests)}: ${n(o.taken)} taken (204), ${n(o.held)} held and cut, ${n(o.refused)} answered 500, ${n(o.forged)} forged`,
    ],
    ['tries the kit recorded', `${n(tries)}: ${counted(facts.tries)}`],
    [
      'verified with `standardwebhooks` and by the specification (must be every request)',
      `${n(look.requests - look.unverified.length)} of ${n(look.requests)}`,
    ],
    ['events never taken by the shop (must be 0)', n(look.lost.length)],
    [
      "requests with an unknown id, or an event's id and another body (must be 0)",
      n(look.unknown.length + look.altered.length),
    ],
    [
      "duplicates (each with its event's id and body)",
      `${n(look.duplicated.receipts)} of ${n(look.duplicated.events)} events`,
    ],
    [
      'orders whose events were first taken out of order (must be 0)',
      `${n(look.outOfOrder.length)} of ${n(look.orders.several)} orders with several events`,
    ],
    [
      'orders whose last event is not what the order is (must be 0)',
      `${n(look.untold.length)} of ${n(look.orders.told)} orders with events`,
    ],
    ['events waiting when the endpoint came back; the last taken after', waitCell(look)],
    ['deliveries the kit left pending or gave up (must be 0)', n(run.leftOver)],
    ['kit processes that died on their own (must be 0)', n(run.crashed)],
    [
      'seconds until every event was taken, after the endpoint came back',
      run.convergedSeconds === null ? 'not within the bound' : run.convergedSeconds.toFixed(1),
    ],
    ["the sandbox's clock moved on", `${n(facts.advancedMinutes)} min in all`],
  ];
  return ['| measure | value |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

function waitCell(look: OutboxLook): string {
  const w = look.waiting;
  if (w === null) return 'none';
  return `${n(w.events)}; ${(w.sandboxSeconds / 60).toFixed(1)} min of sandbox clock (${w.wallSeconds.toFixed(0)} s real)`;
}
