/**
 * `build`, run on the first call only: every later call gets that first call's promise (built with
 * the arguments of that first call). What is built on first use, once: a part of the kit, a CLI
 * command's connection.
 */
export function once<A extends unknown[], T>(build: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  let built: Promise<T> | undefined;
  return (...args) => {
    built ??= build(...args);
    return built;
  };
}
