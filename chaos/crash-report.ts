import { type CaseResult, caseProblems, type Movements } from './crash-verdict.js';
import type { Answer } from './shop.js';

/** The crash points' table, a row per case, markdown as chaos/report.ts prints the storm's. */

const answer = (a: Answer) =>
  a.status === 0
    ? `${a.step}: cut`
    : `${a.step}: ${a.status}${a.code ? ` ${a.code}` : ''}${a.orderStatus ? ` (${a.orderStatus})` : ''}` +
      (a.retryAfter === null ? '' : `, Retry-After ${a.retryAfter}`);

function money(m: Movements | null): string {
  if (!m) return '-';
  const parts = [
    [m.approved, 'approved payment'],
    [m.open, 'open payment'],
    [m.ended, 'failed payment'],
    [m.captures, 'capture'],
    [m.refunds, 'refund'],
    [m.voids, 'void'],
  ] as const;
  const said = parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}${n > 1 ? 's' : ''}`);
  return said.length === 0 ? 'none' : said.join(', ');
}

function versus(r: CaseResult): string {
  if (!r.order) return '-';
  const truth = r.truth === null ? 'no payment' : r.truth.status;
  return `${r.order.status} / ${truth}`;
}

const flagged = (r: CaseResult) =>
  !r.order ? '-' : Number(r.order.needs_review) === 1 ? `yes: ${r.order.review_reason ?? ''}` : 'no';

export function crashTable(results: readonly CaseResult[]): string {
  const rows = results.map((r) => {
    const problems = caseProblems(r);
    return [
      r.name,
      r.death,
      r.answers.length === 0 ? '-' : r.answers.map(answer).join('; '),
      money(r.movements),
      versus(r),
      r.convergedSeconds === null ? 'no' : `${r.convergedSeconds.toFixed(1)} s`,
      flagged(r),
      problems.length === 0 ? 'pass' : `FAIL: ${problems.join('; ')}`,
    ];
  });
  const head = [
    'case',
    'death point',
    'retry answer',
    'gateway money movements',
    'order / truth',
    'converged',
    'flagged',
    'verdict',
  ];
  const line = (cells: string[]) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}
