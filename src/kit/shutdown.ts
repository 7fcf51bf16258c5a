import type { Logger } from 'pino';

/** A part with work in hand: it stops taking more at once, and `drain` resolves when what it holds is done. */
export interface Work {
  name: string;
  drain: () => Promise<void>;
  /**
   * Cuts off what is still in hand when the grace is over; returns what it cut (a request: its method,
   * path, id, how long it ran), each logged, since nothing else will say it was dropped.
   */
  cutOff?: () => readonly object[];
}

/** The things cut off that are named one line each; past it, one line counts the rest. */
const CUT_LINES = 20;

/** Something opened at start-up and closed last, once nothing uses it. */
export interface Connection {
  name: string;
  close: () => Promise<void>;
}

/** A connection that takes longer than this to close is left to the process's exit. */
const CONNECTION_CLOSE_MS = 2000;

/**
 * The one place that stops the kit, in order (issue 8): intake (every part stops taking work at once:
 * no new connection, cron run or job), drain (the requests and jobs in hand finish, for up to
 * `graceMs`), cut-off (what is still in hand is dropped), connections (in the order they were opened).
 * Each part registers itself as it starts, so a start-up that fails half way stops what it started.
 */
export class Shutdown {
  readonly #work: Work[] = [];
  readonly #connections: Connection[] = [];
  #stopping: Promise<void> | undefined;

  constructor(
    private readonly graceMs: number,
    private readonly logger: Logger,
  ) {}

  work(work: Work): void {
    this.#work.push(work);
  }

  connection(connection: Connection): void {
    this.#connections.push(connection);
  }

  /** Called twice, it returns the same promise. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const warn = (what: string) => (error: Error) =>
      this.logger.warn({ err: { message: error.message } }, `while closing ${what}`);
    const inHand = new Set(this.#work);
    const drained = Promise.all(
      this.#work.splice(0).map((work) =>
        work
          .drain()
          .catch(warn(work.name))
          .finally(() => inHand.delete(work)),
      ),
    );
    if (!(await within(drained, this.graceMs))) {
      this.logger.warn(
        { graceMs: this.graceMs, left: [...inHand].map((w) => w.name) },
        'shutdown grace over: cutting off the work left',
      );
      for (const work of inHand) this.#cutOff(work);
    }
    for (const connection of this.#connections.splice(0)) {
      const closed = connection.close().catch(warn(connection.name));
      if (!(await within(closed, CONNECTION_CLOSE_MS)))
        this.logger.warn({ connection: connection.name }, 'connection not closed in time: left to the exit');
    }
  }

  #cutOff(work: Work): void {
    const cut = work.cutOff?.() ?? [];
    for (const what of cut.slice(0, CUT_LINES))
      this.logger.warn({ work: work.name, ...what }, 'cut off at shutdown');
    if (cut.length > CUT_LINES)
      this.logger.warn(
        { work: work.name, more: cut.length - CUT_LINES },
        'cut off at shutdown: more not listed',
      );
  }
}

/** Whether `promise` settled within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
