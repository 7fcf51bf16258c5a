import { type Config, configFromEnvironment, type Reader } from './config.js';
import { SettingError } from './shared/setting-error.js';

/**
 * The configuration of an entry point (`npm start`, the CLI, the standalone sandbox). Bad values end
 * the process with one line for each, naming its variable, exit 1.
 */
export function configOrExit(reader: Reader = 'kit'): Config {
  try {
    return configFromEnvironment(reader);
  } catch (error) {
    return exitOnSettingProblem(error);
  }
}

/**
 * What an operator reads when a process cannot start or a command cannot run: a line naming the
 * setting to fix, or one for each when the configuration has several (`\n`-joined); null for an error
 * that is not a setting's (a bug: let it throw with its stack). Shared by `npm start`, the CLI and
 * the standalone sandbox.
 */
export function settingProblem(error: unknown): string | null {
  if (error instanceof SettingError) return error.lines().join('\n');
  const e = error as {
    name?: string;
    code?: string;
    message?: string;
    sqlMessage?: string;
    parent?: { code?: string; sqlMessage?: string };
  };
  const code = e?.code ?? e?.parent?.code;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ER_ACCESS_DENIED_ERROR' ||
    e?.name === 'SequelizeConnectionRefusedError' ||
    e?.name === 'SequelizeAccessDeniedError'
  )
    return `DATABASE_URL: cannot connect to the database (${code ?? e.name})`;
  // The user may connect but not create the database or its tables (start-up migrates).
  if (code !== undefined && /^ER_(DB|TABLE|SPECIFIC_)?ACCESS_DENIED/.test(code))
    return `DATABASE_URL: the database refuses this user what the kit needs (${code}: ${e.sqlMessage ?? e.parent?.sqlMessage ?? e.message})`;
  if (code === 'EADDRINUSE') return `PORT or GATEWAY_PORT: the port is already in use (${e.message})`;
  if (code === 'EADDRNOTAVAIL') return `HOST: this machine has no such address to listen on (${e.message})`;
  return null;
}

/** Ends the process with a setting's lines and exit 1; anything else is thrown on, as the bug it is. */
export function exitOnSettingProblem(error: unknown): never {
  const line = settingProblem(error);
  if (line === null) throw error;
  console.error(line);
  process.exit(1);
}
