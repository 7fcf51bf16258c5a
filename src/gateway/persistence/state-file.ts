import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from '../../shared/clock.js';
import { SettingError } from '../../shared/setting-error.js';
import type { GatewayState } from '../state/gateway-state.js';
import { keyId } from './keys.js';
import { restore, SnapshotError, snapshot } from './snapshot.js';

/** The state file cannot be read, parsed, matched to this version and key, or written: one line naming it. */
export class SandboxStateError extends SettingError {
  override name = 'SandboxStateError';
  readonly label = 'GATEWAY_SANDBOX_STATE';
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`sandbox state file ${file}: ${problem}`);
  }
}

const codeOf = (e: unknown) => (e as NodeJS.ErrnoException).code ?? (e as Error).message ?? String(e);
const tmpOf = (file: string) => `${file}.tmp`;

/** The parsed JSON of the state file, or undefined when there is none yet. */
export function readStateFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SandboxStateError(file, `cannot be read (${codeOf(e)})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    // Node quotes part of the text in the message, line breaks included: start-up errors stay one line.
    throw new SandboxStateError(file, `is not valid JSON (${(e as Error).message.replace(/\s+/g, ' ')})`);
  }
}

/**
 * Atomic: written to `<file>.tmp`, flushed, then renamed over the file, so a crash leaves the old
 * state or the new one, never half of one. Creates the folder; only the owner may read the file.
 */
export function writeStateFile(file: string, text: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = tmpOf(file);
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (e) {
    throw new SandboxStateError(file, `cannot be written (${codeOf(e)})`);
  }
}

/** Starting afresh on purpose: `rm -f` of the state file and of a left-over `.tmp`. */
export function removeStateFile(file: string): void {
  try {
    rmSync(file, { force: true });
    rmSync(tmpOf(file), { force: true });
  } catch (e) {
    throw new SandboxStateError(file, `cannot be deleted (${codeOf(e)})`);
  }
}

/** The clock a gateway runs on, with how many times the gateway itself moved it forward. */
export interface CountedClock extends Clock {
  moves(): number;
}

/**
 * One gateway's state file: `load` once at start, `save` after every change. A save writes only when
 * the state differs from what was last written, or the sandbox clock was moved (`/sandbox/clock/advance`);
 * the clock's passing alone is written only by the final save on close.
 */
export class StateFile {
  readonly #keyId: string;
  #written: { state: string; now: number; moves: number } | null = null;

  constructor(
    readonly file: string,
    key: Uint8Array,
    private readonly state: GatewayState,
    private readonly clock: CountedClock,
  ) {
    this.#keyId = keyId(key);
  }

  /** Fills the state from the file; null when there is no file yet (the first save creates it). */
  load(): { now: number } | null {
    const json = readStateFile(this.file);
    if (json === undefined) return null;
    try {
      return restore(json, this.state, { keyId: this.#keyId });
    } catch (e) {
      if (e instanceof SnapshotError) throw new SandboxStateError(this.file, e.message);
      throw e;
    }
  }

  /** Writes the state if it changed; `final` (on close) also when only the clock moved on. True if written. */
  save(final = false): boolean {
    const snap = snapshot(this.state, { now: this.clock.now(), keyId: this.#keyId });
    const { clock, ...rest } = snap;
    const state = JSON.stringify(rest);
    const moves = this.clock.moves();
    const last = this.#written;
    if (last && last.state === state && last.moves === moves && !(final && clock.now > last.now))
      return false;
    writeStateFile(this.file, `${JSON.stringify(snap, null, 2)}\n`);
    this.#written = { state, now: clock.now, moves };
    return true;
  }
}
