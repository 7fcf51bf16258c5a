import type { Clock } from '../../shared/clock.js';

/**
 * The active signing secrets, read from the database at most every `ttlMs`, so the receiver's hot
 * path does not query for them. After a rotation elsewhere (the CLI, another instance) a signature
 * that matches none may be fresh: `refresh()` re-reads, unless the last read is under `minRefreshMs`
 * old. Misses that arrive together share one read, and misses one after another one read a second:
 * a flood of bad signatures costs the database (and the decryption) next to nothing. A delivery
 * signed with a secret rotated in that second is refused once and retried by the gateway.
 */
export class SecretCache {
  #secrets: string[] | null = null;
  #loadedAt = 0;
  #loading: Promise<void> | null = null;

  constructor(
    private readonly load: () => Promise<string[]>,
    private readonly clock: Clock,
    private readonly ttlMs = 30_000,
    private readonly minRefreshMs = 1_000,
  ) {}

  /** The secrets, when read under `ttlMs` ago; else null (then `get()`). No promise on the hot path. */
  current(): string[] | null {
    return this.#secrets !== null && this.clock.now() - this.#loadedAt < this.ttlMs ? this.#secrets : null;
  }

  async get(): Promise<string[]> {
    if (this.#secrets === null || this.clock.now() - this.#loadedAt >= this.ttlMs) await this.#reload();
    return this.#secrets!;
  }

  /**
   * `secret` just verified a delivery: it goes first, so the next delivery signed with it costs one
   * HMAC, not one for each secret before it (a secret from GATEWAY_WEBHOOK_SECRETS behind a stored
   * one, say). Any order verifies the same; the next read restores the stored one.
   */
  matched(secret: string): void {
    const secrets = this.#secrets;
    const index = secrets?.indexOf(secret) ?? -1;
    if (index <= 0) return;
    this.#secrets = [secret, ...secrets!.slice(0, index), ...secrets!.slice(index + 1)];
  }

  /** Re-reads the secrets (joining a read already under way), unless they were read under `minRefreshMs` ago. */
  async refresh(): Promise<void> {
    if (
      this.#loading === null &&
      this.#secrets !== null &&
      this.clock.now() - this.#loadedAt < this.minRefreshMs
    )
      return;
    await this.#reload();
  }

  #reload(): Promise<void> {
    this.#loading ??= this.load()
      .then((secrets) => {
        this.#secrets = secrets;
        this.#loadedAt = this.clock.now();
      })
      .finally(() => {
        this.#loading = null;
      });
    return this.#loading;
  }
}
