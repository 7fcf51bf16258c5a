/**
 * Redis losing what it held (FLUSHALL, a restart without persistence, a new empty server behind the
 * same address) takes the reconciler's queued jobs with it: the events stay in the inbox, and the
 * sweeper would queue them again only once they are a minute old. The watch tells such a loss from a
 * mere broken connection by a marker key the kit keeps in that Redis: a Redis that kept its data
 * still has the marker; one that lost it has none, whatever the cause.
 *
 * Every process of the kit watches (any role holds the store and the queue). The first to find the
 * marker missing writes a new one (in one atomic step, so exactly one process does) and queues the
 * inbox's unprocessed events again at once; the others find the new marker and leave it to that one.
 * A process that writes the marker and dies before it has queued them leaves them to the sweeper.
 */

/** What a process owes once it has written the marker: the first look of a process, or a loss since. */
export type Found = 'first' | 'lost';

/** What one look found. */
export type Look =
  /** The marker this process knew (or another's, at its first look): Redis kept its data. */
  | 'held'
  /** No marker at this process's first look: Redis new to the kit, or emptied while no process ran. */
  | 'first'
  /** The marker gone since the last look: this process wrote the new one, and queued again. */
  | 'lost'
  /** Another marker than the one known: another process found the loss first, and queues again. */
  | 'lost-elsewhere'
  /** Redis did not answer: the next look asks again. */
  | 'unanswered';

export interface QueueLossDeps {
  /**
   * Writes `token` as the marker unless one is there, in one atomic step; answers the marker that was
   * there, or null when there was none (and `token` is the marker now).
   */
  claim(token: string): Promise<string | null>;
  /**
   * This process's name in the markers it writes (`<token>/<n>`, its nth try): no other process
   * writes the same, so a write whose answer was lost (the connection broke) is told apart from
   * another's, and every process sees a new marker after a loss, whoever wrote it.
   */
  token: string;
  /** Queues again every event the inbox holds unprocessed (sweeper.ts requeueUnprocessed): how many. */
  requeue(): Promise<number>;
  /** Milliseconds, for how long a requeue took. */
  now(): number;
  logger: {
    debug(fields: object, message: string): void;
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
}

/**
 * One process's watch. `look()` is what a timer and the Redis client's (re)connection call: looks
 * run one at a time, and a look asked for while one runs runs after it (once, however many asked).
 */
export class QueueLossWatch {
  /** The marker this process last saw or wrote; null before its first answered look. */
  #known: string | null = null;
  /** A requeue this process owes: it wrote the marker, and the queue is not filled again yet. */
  #owed: Found | null = null;
  /** How many markers this process tried to write. */
  #writes = 0;
  #running: Promise<Look> | null = null;
  #next: Promise<Look> | null = null;

  constructor(private readonly deps: QueueLossDeps) {}

  look(): Promise<Look> {
    if (this.#running === null) return this.#start();
    this.#next ??= this.#running.then(() => {
      this.#next = null;
      return this.#start();
    });
    return this.#next;
  }

  /** Resolves once the looks asked for are done (a stop waits for them). */
  async idle(): Promise<void> {
    await (this.#next ?? this.#running);
  }

  #start(): Promise<Look> {
    const run = this.#lookOnce().finally(() => {
      if (this.#running === run) this.#running = null;
    });
    this.#running = run;
    return run;
  }

  async #lookOnce(): Promise<Look> {
    const ours = `${this.deps.token}/`;
    // A number of its own for every write tried: a write whose answer was lost is never repeated.
    this.#writes += 1;
    const marker = `${ours}${this.#writes}`;
    let found: string | null;
    try {
      found = await this.deps.claim(marker);
    } catch {
      return 'unanswered'; // Redis down: its outage log says so; the next look asks again
    }
    const look = verdict(this.#known, found, found?.startsWith(ours) === true);
    if (look === 'first' || look === 'lost') this.#owed = look;
    this.#known = found ?? marker;
    if (look === 'lost-elsewhere')
      this.deps.logger.info({}, 'redis lost what it held: another process of the kit queues the inbox again');
    // Owed from this look, or from an earlier one whose requeue failed (the database down, Redis
    // gone again): tried at every look until it is done.
    if (this.#owed !== null) await this.#requeue(this.#owed);
    return look;
  }

  async #requeue(found: Found): Promise<void> {
    const started = this.deps.now();
    let queued: number;
    try {
      queued = await this.deps.requeue();
    } catch (error) {
      this.deps.logger.warn(
        { err: { message: (error as Error).message } },
        'redis lost what it held: queueing the inbox again failed; tried again at the next look',
      );
      return;
    }
    this.#owed = null;
    const line = { queued, ms: this.deps.now() - started };
    if (found === 'lost')
      this.deps.logger.warn(
        line,
        'redis lost what it held (emptied, or restarted without its data): the inbox events not yet applied queued again',
      );
    else if (queued > 0)
      this.deps.logger.info(
        line,
        'redis held nothing of the kit at start: the inbox events not yet applied queued again',
      );
    else this.deps.logger.debug(line, 'redis held nothing of the kit at start: nothing to queue again');
  }
}

/**
 * What a look found, from the marker known before it (null: none yet) and the one it found (null:
 * none, so this process's written now; `foundOurs`: the one found is one this process wrote). A
 * marker of its own other than the one it knows is a write of its own whose answer was lost: the
 * loss is this process's to answer.
 */
export function verdict(
  known: string | null,
  found: string | null,
  foundOurs: boolean,
): Exclude<Look, 'unanswered'> {
  if (found === null || (foundOurs && found !== known)) return known === null ? 'first' : 'lost';
  return known === null || found === known ? 'held' : 'lost-elsewhere';
}
