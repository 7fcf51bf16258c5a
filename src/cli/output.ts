import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';

/** A command's answer on stdout: JSON, indented. */
export const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

/** One line naming what is wrong, on stderr, and exit 1. */
export function fail(line: string): never {
  console.error(line);
  process.exit(1);
}

/** A file opened for writing, or the option's one line (`--out: cannot write x (ENOENT)`) and exit 1. */
export async function openForWriting(option: string, path: string): Promise<WriteStream> {
  const stream = createWriteStream(path);
  try {
    await once(stream, 'open');
  } catch (error) {
    fail(
      `${option}: cannot write ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  return stream;
}
