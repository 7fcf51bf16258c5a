import type { Redis } from 'ioredis';

/**
 * Operator sessions ended before their time (POST /ops/logout). A session is a signed cookie the kit
 * stores nowhere; ending one records its id until it would have expired anyway.
 */
export interface EndedSessions {
  end(id: string, untilMs: number, now: number): Promise<void>;
  isEnded(id: string): Promise<boolean>;
}

/**
 * Ended operator sessions in Redis, one key per session id that lives as long as the session would
 * have: every api process sees a logout at once, and nothing is left once the cookie has expired.
 */
export class RedisEndedSessions implements EndedSessions {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async end(id: string, untilMs: number, now: number): Promise<void> {
    await this.redis.set(this.#key(id), '1', 'PX', Math.max(1, untilMs - now));
  }

  async isEnded(id: string): Promise<boolean> {
    // A Redis that does not answer throws: the board is then refused, never opened to an ended session.
    return (await this.redis.exists(this.#key(id))) === 1;
  }

  #key(id: string): string {
    return `${this.prefix}:ops-session-ended:${id}`;
  }
}
