import { SingleBar } from 'cli-progress';

/** A progress bar on a terminal (stderr, so stdout keeps only the summary); nothing elsewhere. */
export interface Progress {
  update(phase: string, done: number, total: number): void;
  stop(): void;
}

export function progressBar(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new SingleBar({
    stream,
    format: '{phase} [{bar}] {value}/{total} ({eta_formatted} left)',
    hideCursor: true,
    clearOnComplete: true,
  });
  let started = false;
  return {
    update(phase, done, total) {
      if (!started) {
        bar.start(total, done, { phase });
        started = true;
        return;
      }
      bar.setTotal(total);
      bar.update(done, { phase });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

/** Runs `work` with a progress bar, stopped whatever happens. */
export async function withProgressBar<T>(work: (bar: Progress) => Promise<T>): Promise<T> {
  const bar = progressBar();
  try {
    return await work(bar);
  } finally {
    bar.stop();
  }
}

/** A summary as aligned `name value` lines under a title. */
export function summaryLines(title: string, rows: [string, string | number | null][]): string {
  const width = Math.max(...rows.map(([name]) => name.length));
  return [title, ...rows.map(([name, value]) => `  ${name.padEnd(width)}  ${value ?? '-'}`)].join('\n');
}
