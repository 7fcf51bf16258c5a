import { sign } from '../src/shared/signature.js';
import { delay } from '../test/support/process.js';
import type { EventPayload, GatewayReader } from './gateway.js';
import { type Random, takeAny } from './random.js';

/**
 * The gateway's at-least-once, overdone: every event the sandbox records is posted to its merchant's
 * receiver URL `copies` more times, signed with that merchant's current secret, picked at random from
 * everything not yet sent, so copies arrive late, early and out of order (a refund before its
 * capture). While an outage cuts the receiver off, nothing is posted; events made during it are the
 * gap the kit must fill on its own (recovery, or the gateway's retries), so their copies are held back
 * until the kit has stored them.
 *
 * With several merchants, now and then (`forgedShare` of the events) one more copy of a merchant's
 * event goes to another merchant's URL, signed with that other merchant's secret: an event forged
 * across merchants, which must change no order. It is posted once the kit has stored the event as
 * its own merchant's: a forged copy that came first would take the event's id (the inbox keeps an
 * event once by its id), and the gateway's own delivery of it would then be a duplicate.
 */

const BATCH = 100;
const CONCURRENCY = 8;
const LOOP_MS = 500;
/** Listed again before the newest event seen: events recorded in the same instant are not missed. */
const OVERLAP_MS = 5000;
const POST_MS = 30_000;

export interface DuplicateOptions {
  reader: GatewayReader;
  /** Each merchant's receiver URL. */
  receiverUrl: (merchant: number) => string;
  random: Random;
  copies: number;
  /** Each merchant's current signing secret, by merchant id. */
  secrets: ReadonlyMap<number, string>;
  /** The share of events of which one copy is forged to another merchant's URL; default 0 (none). */
  forgedShare?: number;
  /** Which of these event ids the kit's inbox holds. */
  stored: (eventIds: string[]) => Promise<Set<string>>;
  log: (line: string) => void;
}

/** One copy of an event: where it goes (that merchant's URL, signed with its secret). */
interface Copy {
  body: string;
  to: number;
  /** Another merchant's event, posted to `to` signed with `to`'s secret. */
  forged: boolean;
}

export class Duplicates {
  /** Every event seen so far, with its payload. */
  readonly payloads = new Map<string, EventPayload>();
  /** The receiver's answers to the copies, by HTTP status (0: no answer). */
  readonly answers = new Map<number, number>();
  /** The receiver's answers to the forged copies alone, by HTTP status. */
  readonly forgedAnswers = new Map<number, number>();
  posted = 0;
  /** Of those, forged copies (another merchant's event at a merchant's URL). */
  forged = 0;
  #pool: Copy[] = [];
  /** Copies that wait until the kit has stored their event by itself, by event id. */
  #held = new Map<string, Copy[]>();
  #newest: number | null = null;
  #outage: { from: number; until: number } | null = null;
  readonly #secrets: Map<number, string>;
  #loop: Promise<void> | null = null;
  #stopping = false;

  constructor(private readonly o: DuplicateOptions) {
    this.#secrets = new Map(o.secrets);
  }

  /** After a rotation of `merchant`'s secret: its copies from now on are signed with the new one. */
  useSecret(merchant: number, secret: string): void {
    this.#secrets.set(merchant, secret);
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
    return this.#pool.length + [...this.#held.values()].reduce((sum, copies) => sum + copies.length, 0);
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
    const picks: Copy[] = [];
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
    for (const row of rows) {
      if (this.payloads.has(row.id)) continue;
      const event = await this.o.reader.payload(row);
      this.payloads.set(event.id, event);
      this.#newest = Math.max(this.#newest ?? 0, event.createdAtMs);
      const { copies, forged } = this.#copiesOf(event);
      if (this.#duringOutage(event)) this.#held.set(event.id, [...copies, ...forged]);
      else {
        this.#pool.push(...copies);
        if (forged.length > 0) this.#held.set(event.id, forged);
      }
    }
  }

  /** The event's copies to its own merchant's URL, and the forged one to another's, if it gets one. */
  #copiesOf(event: EventPayload): { copies: Copy[]; forged: Copy[] } {
    const copies = Array.from({ length: this.o.copies }, () => ({
      body: event.body,
      to: event.merchantId,
      forged: false,
    }));
    const others = [...this.#secrets.keys()].filter((m) => m !== event.merchantId);
    if (others.length === 0 || !(this.o.random() < (this.o.forgedShare ?? 0))) return { copies, forged: [] };
    const to = others[Math.floor(this.o.random() * others.length)]!;
    return { copies, forged: [{ body: event.body, to, forged: true }] };
  }

  /** The held copies whose event the kit has stored by now join the pool. */
  async #release(): Promise<void> {
    if (this.#held.size === 0) return;
    for (const id of await this.o.stored([...this.#held.keys()])) {
      this.#pool.push(...this.#held.get(id)!);
      this.#held.delete(id);
    }
  }

  async #post(copies: Copy[]): Promise<void> {
    let next = 0;
    const count = (answers: Map<number, number>, status: number) =>
      answers.set(status, (answers.get(status) ?? 0) + 1);
    const sender = async () => {
      while (next < copies.length) {
        const copy = copies[next++]!;
        const status = await this.#send(copy);
        this.posted += 1;
        count(this.answers, status);
        if (copy.forged) {
          this.forged += 1;
          count(this.forgedAnswers, status);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, sender));
  }

  async #send({ body, to }: Copy): Promise<number> {
    const secret = this.#secrets.get(to);
    if (secret === undefined) throw new Error(`no signing secret for merchant ${to}`);
    const signature = sign(body, secret, Math.floor(Date.now() / 1000));
    try {
      const res = await fetch(this.o.receiverUrl(to), {
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
