import { withDeadline } from '../src/shared/deadline.js';

/**
 * What the run started and must stop whatever happens (the kit's processes, the private MariaDB and
 * Redis, their folders): undone last first, each step bounded, once, also on Ctrl-C.
 */
export class Cleanup {
  readonly #steps: { name: string; run: () => Promise<void> | void }[] = [];
  #done: Promise<void> | null = null;

  add(name: string, run: () => Promise<void> | void): void {
    this.#steps.push({ name, run });
  }

  /** Runs every step, newest first; a step that fails or hangs is reported and the rest still run. */
  run(log: (line: string) => void, stepMs = 30_000): Promise<void> {
    this.#done ??= (async () => {
      for (const step of this.#steps.reverse()) {
        try {
          await withDeadline(Promise.resolve().then(step.run), stepMs, `clean-up: ${step.name}`);
        } catch (error) {
          log(`clean-up: ${step.name} failed: ${(error as Error).message}`);
        }
      }
    })();
    return this.#done;
  }
}

/**
 * A signal within this of the first is the same one delivered twice: Ctrl-C (or `timeout`) reaches
 * npm and this process together, and npm forwards it once more (as in src/main.ts).
 */
const REPEAT_MS = 1000;

/** Ctrl-C or SIGTERM: clean up, then exit 130 (a second signal, a second or more later, exits at once). */
export function cleanUpOnSignal(cleanup: Cleanup, log: (line: string) => void): void {
  let firstAt: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstAt !== null) {
      if (Date.now() - firstAt >= REPEAT_MS) process.exit(130);
      return;
    }
    firstAt = Date.now();
    log(`${signal}: stopping the kit and the private services`);
    void cleanup.run(log).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
