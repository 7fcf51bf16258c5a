import { userInfo } from 'node:os';
import { NO_CARD_NUMBER } from '../merchant/http/schemas.js';
import { type Actor, reservedNameProblem } from '../merchant/operators/roles.js';
import { hasCardNumber } from '../shared/card-numbers.js';
import { parseIsoTime } from '../shared/iso-time.js';
import { fail } from './output.js';

/** What the commands take from the command line: read, or refused with one line naming it and exit 1. */

/** The command line's credential in the records (it holds the database's keys: an administrator). */
export const CLI_CREDENTIAL = 'cli';

/**
 * `--by` (else `fallback`): kept with the operator's decision, so printable, free of card numbers and
 * not a name the records give the kit's own acts. The command line holds the database's keys: it acts
 * as an administrator, and the audit says `cli`.
 */
export function cliActor(by: string | undefined, fallback: () => string): Actor {
  if (by === undefined) return { name: fallback(), role: 'admin', credential: CLI_CREDENTIAL };
  if (!/^[\x20-\x7e]{1,64}$/.test(by)) fail('--by: must be 1 to 64 printable characters');
  if (hasCardNumber(by)) fail(`--by: ${NO_CARD_NUMBER}`);
  const reserved = reservedNameProblem(by);
  if (reserved) fail(`--by: ${reserved}; give the name of the person who acted, or leave --by out`);
  return { name: by, role: 'admin', credential: 'cli' };
}

/** Who runs the command, as the system knows them; `cli` when it cannot say, or the name is reserved. */
export function systemUser(): string {
  try {
    const name = userInfo().username;
    return /^[\x20-\x7e]{1,64}$/.test(name) && reservedNameProblem(name) === null ? name : 'cli';
  } catch {
    return 'cli';
  }
}

/** `--note`: kept with the decision, so 1 to 512 characters (trimmed) and free of card numbers. */
export function noteOf(text: string): string {
  const note = text.trim();
  if (note === '' || note.length > 512) fail('--note: must be 1 to 512 characters');
  if (hasCardNumber(note)) fail(`--note: ${NO_CARD_NUMBER}`);
  return note;
}

/** `--limit`: a whole number from 1 to 1000. */
export function listLimit(text: string): number {
  const limit = Number(text);
  if (!/^\d{1,4}$/.test(text) || limit < 1 || limit > 1000)
    fail(`--limit: must be a whole number from 1 to 1000 (got "${text}")`);
  return limit;
}

/** A command-line timestamp, or one line naming the option and exit 1. */
export function timestamp(option: string, value: string): Date {
  const at = parseIsoTime(value);
  if (at === null) {
    console.error(
      `${option}: must be a real ISO 8601 date or time, such as 2026-11-23T08:00:00Z (got "${value}")`,
    );
    process.exit(1);
  }
  return at;
}

/** A merchant id (`--merchant`): a whole number, as GATEWAY_MERCHANTS lists them; else one line and exit 1. */
export function merchantId(option: string, value: string): number {
  const id = Number(value);
  if (!/^[1-9]\d{0,9}$/.test(value) || !Number.isSafeInteger(id))
    fail(`${option}: must be a merchant id, a whole number such as 1001 (got "${value}")`);
  return id;
}
