/**
 * gateway-api.md, Idempotency contract (capture, refund, void). The store decides; the HTTP layer
 * validates and authorizes first (rule 5: those failures never reach here, so they consume no key).
 */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface StoredResponse {
  status: number;
  body: unknown;
}

interface Entry {
  fingerprint: string;
  createdAt: number;
  response: StoredResponse | null; // null while the original runs
}

/** A completed entry, as the state file keeps it. */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  fingerprint: string;
  createdAt: number;
  response: StoredResponse;
}

export type Admission =
  | { kind: 'execute' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'conflict' }
  | { kind: 'in_progress' };

export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();

  /** `scope` is the API key (rule 1: keys are scoped to it); `fingerprint` identifies the request. */
  begin(scope: string, key: string, fingerprint: string, now: number): Admission {
    const id = `${scope}\n${key}`;
    const entry = this.#entries.get(id);
    if (entry && now - entry.createdAt < IDEMPOTENCY_TTL_MS) {
      if (entry.fingerprint !== fingerprint) return { kind: 'conflict' }; // rule 3
      if (entry.response === null) return { kind: 'in_progress' }; // rule 4
      return { kind: 'replay', response: entry.response }; // rule 2
    }
    this.#entries.set(id, { fingerprint, createdAt: now, response: null });
    return { kind: 'execute' };
  }

  /** Stores the original answer, declines included (rule 2). */
  complete(scope: string, key: string, response: StoredResponse): void {
    const entry = this.#entries.get(`${scope}\n${key}`);
    if (entry) entry.response = response;
  }

  /** An unexpected failure frees the key, so a retry executes instead of replaying a 500. */
  abandon(scope: string, key: string): void {
    this.#entries.delete(`${scope}\n${key}`);
  }

  /**
   * The completed entries. One still running is left out: if the process dies before it completes,
   * a retry after the restart executes instead of waiting on an original that will never finish.
   */
  records(): IdempotencyRecord[] {
    const out: IdempotencyRecord[] = [];
    for (const [id, entry] of this.#entries) {
      if (entry.response === null) continue;
      const at = id.lastIndexOf('\n'); // a header value holds no line break; a seed key might
      out.push({
        scope: id.slice(0, at),
        key: id.slice(at + 1),
        fingerprint: entry.fingerprint,
        createdAt: entry.createdAt,
        response: entry.response,
      });
    }
    return out;
  }

  load(records: readonly IdempotencyRecord[]): void {
    for (const r of records) {
      this.#entries.set(`${r.scope}\n${r.key}`, {
        fingerprint: r.fingerprint,
        createdAt: r.createdAt,
        response: r.response,
      });
    }
  }

  prune(now: number): void {
    for (const [id, entry] of this.#entries) {
      if (now - entry.createdAt >= IDEMPOTENCY_TTL_MS) this.#entries.delete(id);
    }
  }
}

/** A canonical text of a JSON value: object keys sorted, so `{"a":1,"b":2}` equals `{"b":2,"a":1}`. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
