import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyOf, forward } from '../test/support/wire.js';

/**
 * A pass-through on 127.0.0.1 that can stop one request at a chosen point, so that the run can kill
 * the process on one side of it right there: `arm` a rule, and the first request it matches is held
 * either before it leaves (`request`: never forwarded) or after the target answered (`answer`: the
 * target did the work, its answer waits). The rule's promise settles at that moment; the run kills
 * what it kills, then `drop()`s the held exchange (the client's connection is cut, as the dead
 * process would have left it). One-shot: the rule is gone once matched. Everything else goes
 * through unchanged.
 *
 * `pause` holds every request a predicate picks (before it leaves) until `resume`, then sends them
 * on: news that must not arrive before the run says so (the gateway's webhooks, the scheduler's
 * questions) waits at the door instead of racing the kill.
 */

export type HoldMode = 'request' | 'answer';

/** A request as the proxy sees it: `who` is the first path segment when the proxy routes by caller. */
export interface Passing {
  who: string;
  method: string;
  /** The path the target sees, without the query. */
  path: string;
}

export interface HoldRule {
  method: string;
  path: RegExp;
  mode: HoldMode;
  /** Only this caller's requests (a proxy routing by caller); any caller when unset. */
  who?: string;
}

/** The exchange the rule stopped. */
export interface Held {
  passing: Passing;
  /** The target's answer held back (mode `answer`); null when the request never left. */
  status: number | null;
  /** Cuts the client's connection: the held request or answer goes nowhere. */
  drop(): void;
}

interface Armed {
  rule: HoldRule;
  resolve: (held: Held) => void;
  reject: (error: Error) => void;
}

const matches = (rule: HoldRule, p: Passing) =>
  rule.method === p.method && rule.path.test(p.path) && (rule.who === undefined || rule.who === p.who);

export class HoldProxy {
  #armed: Armed | null = null;
  #paused: ((p: Passing) => boolean) | null = null;
  #waiting: (() => void)[] = [];

  private constructor(
    readonly url: string,
    private readonly target: string,
    private readonly byCaller: boolean,
    private readonly closeServer: () => Promise<void>,
  ) {}

  /**
   * A proxy in front of `target`. `byCaller`: each caller is given `baseFor(name)` and the first
   * path segment names it (taken off before forwarding), as test/support/wire.ts does.
   */
  static async start(target: string, o: { byCaller: boolean }): Promise<HoldProxy> {
    let proxy: HoldProxy | null = null;
    const server = createServer((req, res) => {
      void proxy!.#handle(req, res).catch(() => res.socket?.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const close = () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    proxy = new HoldProxy(url, target.replace(/\/+$/, ''), o.byCaller, close);
    return proxy;
  }

  /** The base URL a caller named `who` is given (a proxy routing by caller). */
  baseFor(who: string): string {
    return `${this.url}/${who}`;
  }

  /** Holds the first request `rule` matches; settles when it is held. Replaces a rule not yet matched. */
  arm(rule: HoldRule): Promise<Held> {
    this.#armed?.reject(new Error('disarmed: another rule was armed'));
    return new Promise<Held>((resolve, reject) => {
      this.#armed = { rule, resolve, reject };
    });
  }

  /** Forgets a rule that never matched (its promise rejects). */
  disarm(): void {
    this.#armed?.reject(new Error('disarmed before any request matched'));
    this.#armed = null;
  }

  /** From now on, requests `which` picks wait at the door until `resume`. */
  pause(which: (p: Passing) => boolean): void {
    this.#paused = which;
  }

  /** Sends on, in their order, the requests that waited. */
  resume(): void {
    this.#paused = null;
    for (const go of this.#waiting.splice(0)) go();
  }

  close(): Promise<void> {
    this.disarm();
    this.resume();
    return this.closeServer();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await bodyOf(req);
    const url = req.url ?? '/';
    let tail = url;
    let who = '';
    if (this.byCaller) {
      const [, first = '', ...rest] = url.split('/');
      who = first;
      tail = `/${rest.join('/')}`;
    }
    const passing: Passing = { who, method: req.method ?? 'GET', path: tail.split('?')[0]! };
    if (this.#paused?.(passing)) await new Promise<void>((go) => this.#waiting.push(go));

    const armed = this.#armed && matches(this.#armed.rule, passing) ? this.#armed : null;
    if (armed) this.#armed = null;
    const cut = () => res.socket?.destroy();
    if (armed?.rule.mode === 'request') {
      armed.resolve({ passing, status: null, drop: cut });
      return;
    }
    let answer: Awaited<ReturnType<typeof forward>>;
    try {
      answer = await forward(req, body, this.target + tail);
    } catch (error) {
      // The target went away mid-request (the process the run killed): the client's connection goes too.
      cut();
      armed?.reject(
        new Error(`${passing.method} ${passing.path} got no answer: ${(error as Error).message}`),
      );
      return;
    }
    if (armed) {
      armed.resolve({ passing, status: answer.status, drop: cut });
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }
}
