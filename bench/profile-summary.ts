/**
 * Where a process's CPU went, from a V8 .cpuprofile (`BENCH_KIT_NODE_ARGS='--cpu-prof
 * --cpu-prof-dir=prof'`): self time by function (name, file and line) and by file or package, the top
 * entries, each as a share of the busy time (the idle and program samples left out) and, given the
 * events the process served, in µs an event. With `window`, a function's name, only the samples from
 * the first whose stack holds that function to the last: the load, without the start-up (module
 * loading, migrations) or the shutdown; with `from`, a number of seconds, only the samples after that
 * many seconds of the profile (the bench's warm-up left out: `node bench/profile-summary.ts` prints
 * the busy milliseconds of each second with `timeline` as `top`).
 *
 *   node --import tsx bench/profile-summary.ts prof/CPU....cpuprofile [events] [top] [window] [from]
 *   (e.g. `... 19696 15 receive 30`)
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, eventsArg, topArg, window, fromArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [events] [top]');
const events = Number(eventsArg ?? 0);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
/** When each sample was taken, µs from the profile's start. */
const at: number[] = [];
profile.timeDeltas.reduce((t, delta, i) => (at[i] = t + delta), 0);
if (topArg === 'timeline') {
  const busy = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    const name = profile.nodes.find((n) => n.id === id)!.callFrame.functionName;
    if (name !== '(idle)')
      busy.set(Math.floor(at[i]! / 1e6), (busy.get(Math.floor(at[i]! / 1e6)) ?? 0) + profile.timeDeltas[i]!);
  });
  console.log([...busy].map(([second, us]) => `${second}s:${Math.round(us / 1000)}ms`).join(' '));
  process.exit(0);
}
const top = Number(topArg ?? 15);

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
const holds = (id: number, name: string) => {
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at))
    if (byId.get(at)!.callFrame.functionName === name) return true;
  return false;
};
const from = Number(fromArg ?? 0) * 1e6;
let first = Math.max(
  0,
  at.findIndex((t) => t >= from),
);
let last = profile.samples.length - 1;
if (window) {
  first = profile.samples.findIndex((id, i) => i >= first && holds(id, window));
  last = profile.samples.findLastIndex((id) => holds(id, window));
  if (first < 0) throw new Error(`no sample holds ${window}`);
}
const selfUs = new Map<number, number>();
for (let i = first; i <= last; i += 1) {
  const id = profile.samples[i]!;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}

/** A file as a short name: a package under node_modules by its name, node's own by `node:`, else the path from dist/ or src/. */
function where(url: string): string {
  if (url === '') return '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  const own = /\/((?:dist\/)?(?:src|bench)\/.*)$/.exec(url);
  return own ? own[1]! : url;
}

const fns = new Map<string, number>();
const files = new Map<string, number>();
let busy = 0;
let idle = 0;
let program = 0;
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  if (functionName === '(idle)') {
    idle += us;
    continue;
  }
  // Native work V8 cannot place in a JavaScript stack (libuv, the HTTP parser, the kernel): counted apart.
  if (functionName === '(program)') {
    program += us;
    continue;
  }
  busy += us;
  const file = where(url);
  const fn = `${functionName || '(anonymous)'} ${file}${url ? `:${lineNumber + 1}` : ''}`;
  fns.set(fn, (fns.get(fn) ?? 0) + us);
  files.set(file, (files.get(file) ?? 0) + us);
}

const table = (title: string, rows: Map<string, number>) => {
  console.log(`\n${title}\n`);
  console.log(`| | self ms | % of busy |${events ? ' µs an event |' : ''}`);
  console.log(`|---|---:|---:|${events ? '---:|' : ''}`);
  for (const [name, us] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(
      `| ${name} | ${(us / 1000).toFixed(0)} | ${((100 * us) / busy).toFixed(1)} |${events ? ` ${(us / events).toFixed(2)} |` : ''}`,
    );
};
console.log(
  `${file}${window ? ` (from the first sample in ${window}${from ? ` after ${from / 1e6} s` : ''} to the last)` : ''}: busy ${(busy / 1000).toFixed(0)} ms, (program) ${(program / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms${
    events
      ? `; ${events} events: ${(busy / events).toFixed(1)} µs busy an event, ${(program / events).toFixed(1)} µs (program)`
      : ''
  }`,
);
table(`Top ${top} functions by self time`, fns);
table(`Top ${top} files and packages by self time`, files);
