import { sign } from '../src/shared/signature.js';
import { delay } from '../test/support/process.js';
import type { EventPayload, GatewayReader } from './gateway.js';
import { type Random, takeAny } from './random.js';

/**
 * The gateway's at-least-once, overdone: every event the sandbox records is posted to the receiver
 * `copies` more times, signed with the kit's current secret, picked at random from everything not yet
 * sent, so copies arrive late, early and out of order (a refund before its capture). While an outage
 * cuts the receiver off, nothing is posted; events made during it are the gap the kit must fill on its
 * own (recovery, or the gateway's retries), so their copies are held back until the kit has stored them.
 */

const BATCH = 100;
const CONCURRENCY = 8;
const LOOP_MS = 500;
/** Listed again before the newest event seen: events recorded in the same instant are not missed. */
const OVERLAP_MS = 5000;
const POST_MS = 30_000;

export interface DuplicateOptions {
  reader: GatewayReader;
  receiverUrl: string;
  random: Random;
  copies: number;
  secret: string;
  /** Which of these event ids the kit's inbox holds. */
  stored: (eventIds: string[]) => Promise<Set<string>>;
  log: (line: string) => void;
}

export class Duplicates {
  /** Every event seen so far, with its payload. */
  readonly payloads = new Map<string, EventPayload>();
  /** The receiver's answers to the copies, by HTTP status (0: no answer). */
  readonly answers = new Map<number, number>();
  posted = 0;
  #pool: string[] = [];
  /** Events made during the outage, by id: duplicated once the kit has them by itself. */
  #held = new Map<string, string>();
  #newest: number | null = null;
  #outage: { from: number; until: number } | null = null;
  #secret: string;
  #loop: Promise<void> | null = null;
  #stopping = false;

  constructor(private readonly o: DuplicateOptions) {
    this.#secret = o.secret;
  }

  /** After a rotation: copies from now on are signed with the new secret. */
  useSecret(secret: string): void {
    this.#secret = secret;
  }

  /** The receiver is cut off from `from` to `until` (sandbox clock, which is real time here). */
  cutOff(window: { from: number; until: number }): void {
    this.#outage = window;
  }

  start(): void {
    this.#loop = (async () => {
      while (!this.#stopping) {
        await this.#round(BATCH).catch((error: Error) => this.o.log(`duplicates: ${error.message}`));
        await delay(LOOP_MS);
      }
    })();
  }

  /** Stops the loop, then sends every copy left (bounded by `withinMs`); how many were never sent. */
  async finish(withinMs: number): Promise<number> {
    this.#stopping = true;
    await this.#loop;
    const deadline = Date.now() + withinMs;
    do {
      await this.#round(Number.POSITIVE_INFINITY).catch((error: Error) =>
        this.o.log(`duplicates: ${error.message}`),
      );
      if (this.#held.size > 0) await delay(LOOP_MS);
    } while (this.#pool.length + this.#held.size > 0 && Date.now() < deadline);
    return this.#pool.length + this.#held.size * this.o.copies;
  }

  /** Each auth's captured amount, from the capture records the events carried. */
  captures(): Map<number, number> {
    const captured = new Map<number, number>();
    for (const { transaction: t } of this.payloads.values())
      if (t.transaction_type === 'capture' && t.related_trans_id !== null)
        captured.set(t.related_trans_id, t.amount);
    return captured;
  }

  /** Every event the gateway has recorded has its payload here (the truth check needs the captures). */
  async catchUp(): Promise<void> {
    await this.#collect();
  }

  async #round(batch: number): Promise<void> {
    await this.#collect();
    if (this.#cutOffNow()) return;
    await this.#release();
    const picks: string[] = [];
    while (picks.length < batch && this.#pool.length > 0) picks.push(takeAny(this.o.random, this.#pool)!);
    await this.#post(picks);
  }

  #cutOffNow = () => this.#outage !== null && Date.now() < this.#outage.until;

  #duringOutage = (event: EventPayload) =>
    this.#outage !== null &&
    event.createdAtMs >= this.#outage.from &&
    event.createdAtMs <= this.#outage.until;

  /** Lists what the gateway recorded since the newest event seen; fetches the new ones' payloads. */
  async #collect(): Promise<void> {
    const from = this.#newest === null ? undefined : new Date(this.#newest - OVERLAP_MS).toISOString();
    const rows = await this.o.reader.events(from);
    for (const row of rows.reverse()) {
      if (this.payloads.has(row.id)) continue;
      const event = await this.o.reader.payload(row.id);
      this.payloads.set(event.id, event);
      this.#newest = Math.max(this.#newest ?? 0, event.createdAtMs);
      if (this.#duringOutage(event)) this.#held.set(event.id, event.body);
      else this.#copy(event.body);
    }
  }

  #copy(body: string): void {
    for (let i = 0; i < this.o.copies; i++) this.#pool.push(body);
  }

  /** The held events the kit has stored by now join the pool. */
  async #release(): Promise<void> {
    if (this.#held.size === 0) return;
    for (const id of await this.o.stored([...this.#held.keys()])) {
      this.#copy(this.#held.get(id)!);
      this.#held.delete(id);
    }
  }

  async #post(bodies: string[]): Promise<void> {
    let next = 0;
    const sender = async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const status = await this.#send(body);
        this.posted += 1;
        this.answers.set(status, (this.answers.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, sender));
  }

  async #send(body: string): Promise<number> {
    const signature = sign(body, this.#secret, Math.floor(Date.now() / 1000));
    try {
      const res = await fetch(this.o.receiverUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Service-Signature': signature },
        body,
        signal: AbortSignal.timeout(POST_MS),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  }
}
