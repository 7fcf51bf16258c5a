import type { Clock } from '../../shared/clock.js';

/**
 * The active signing secrets, read from the database at most every `ttlMs`, so the receiver's hot
 * path does not query for them. After a rotation elsewhere (the CLI, another instance) a signature
 * that matches none may be fresh: `refresh()` re-reads at once, but not more than once a second.
 */
export class SecretCache {
  #secrets: string[] | null = null;
  #loadedAt = 0;

  constructor(
    private readonly load: () => Promise<string[]>,
    private readonly clock: Clock,
    private readonly ttlMs = 30_000,
  ) {}

  async get(): Promise<string[]> {
    if (this.#secrets === null || this.clock.now() - this.#loadedAt >= this.ttlMs) await this.#reload();
    return this.#secrets!;
  }

  /** Re-reads unless that was done within the last second; true if it did. */
  async refresh(): Promise<boolean> {
    if (this.#secrets !== null && this.clock.now() - this.#loadedAt < 1000) return false;
    await this.#reload();
    return true;
  }

  async #reload(): Promise<void> {
    this.#secrets = await this.load();
    this.#loadedAt = this.clock.now();
  }
}
