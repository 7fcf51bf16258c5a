/**
 * Every log line the suite's kits and processes wrote, for the guard that runs after the whole suite
 * (log-guard.ts). Kept on globalThis: one list, whichever copy of this module a file imports.
 */
const key = Symbol.for('merchant-kit.test-log-lines');
const store = globalThis as unknown as Record<symbol, string[]>;

store[key] ??= [];
export const suiteLogLines: string[] = store[key];

/** Adds a chunk of output, split into its lines. */
export function logged(chunk: string): void {
  for (const line of chunk.split('\n')) if (line.trim() !== '') suiteLogLines.push(line);
}
