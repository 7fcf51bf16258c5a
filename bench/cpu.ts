/**
 * CPU time of the bench's processes, read from /proc (Linux), around each run: what an event costs
 * each process that serves it, MySQL and Redis included when they run on this machine.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let tickUs: number | null = null;
/** µs a clock tick of /proc/<pid>/stat: USER_HZ, as `getconf CLK_TCK` gives it (100 on Linux). */
const tick = () => (tickUs ??= 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()));

/** A process's CPU time so far (user and system), µs; null when it cannot be read. */
export function cpuUs(pid: number | null | undefined): number | null {
  if (!pid) return null;
  try {
    // The fields after the command's closing parenthesis: utime is the 12th, stime the 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * tick();
  } catch {
    return null;
  }
}

/** The first process whose command is one of `names` (MySQL's server, Redis's), or null. */
export function pidOf(...names: string[]): number | null {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) return Number(entry);
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return null;
}

/**
 * The pid a server wrote to its pid file (MySQL's `@@pid_file`), when the file is there and names a
 * running process: the very server the bench talks to, where a machine may run more than one.
 */
export function pidFromFile(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && cpuUs(pid) !== null ? pid : null;
  } catch {
    return null;
  }
}
