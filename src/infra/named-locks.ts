import { createHash } from 'node:crypto';
import type mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';

/** What `holding` answers when another holder kept the lock for the whole wait. */
export const BUSY = Symbol('busy');

/**
 * How long the server keeps a lock's connection that says nothing: a process that dies closes its
 * connections, and so lets its locks go at once; one whose host vanished sends no close, and its lock
 * lasts this long. Longer than a payment's calls to the gateway take, retries included.
 */
export const LOCK_IDLE_SECONDS = 120;

/**
 * MySQL's named locks (GET_LOCK), held on a connection of their own for as long as `work` runs. The
 * server ends a lock with its connection: a process that dies holding one lets it go at once, where a
 * lock with a lease would keep the next caller waiting for the lease. The names are the server's, not
 * the database's: each is prefixed with a digest of the database's name, so two databases on one
 * server (a test's, a copy) never share a lock.
 */
export class NamedLocks {
  readonly #prefix: string;
  /** The pool's connections already told LOCK_IDLE_SECONDS. */
  readonly #told = new WeakSet<object>();

  constructor(
    private readonly pool: mysql.Pool,
    database: string,
  ) {
    this.#prefix = createHash('sha256').update(database).digest('hex').slice(0, 12);
  }

  /** The lock's name on the server: `name`, under this database's prefix. */
  serverName(name: string): string {
    return `${this.#prefix}:${name}`;
  }

  /**
   * Runs `work` once this process holds `name`, waiting at most `waitMs` for whoever holds it now;
   * BUSY if they kept it that long (nothing run). The lock goes with `work`'s end, thrown or not.
   */
  async holding<T>(name: string, waitMs: number, work: () => Promise<T>): Promise<T | typeof BUSY> {
    const lock = this.serverName(name);
    if (lock.length > 64) throw new Error(`a lock name is at most 64 characters: ${lock}`);
    const connection = await this.pool.getConnection();
    let held = false;
    try {
      if (!this.#told.has(connection.connection)) {
        await connection.query(`SET SESSION wait_timeout = ${LOCK_IDLE_SECONDS}`);
        this.#told.add(connection.connection);
      }
      const [rows] = await connection.query<RowDataPacket[]>('SELECT GET_LOCK(?, ?) AS got', [
        lock,
        waitMs / 1000,
      ]);
      // 1: held; 0: the wait ran out; NULL: the server could not (killed, out of memory).
      const got = rows[0]?.got;
      if (got === null || got === undefined) throw new Error(`GET_LOCK(${lock}) failed`);
      if (Number(got) !== 1) return BUSY;
      held = true;
      return await work();
    } finally {
      if (held) await release(connection, lock);
      else connection.release();
    }
  }
}

/** Lets the lock go and the connection back to the pool; a connection that cannot is closed, which ends its locks. */
async function release(connection: mysql.PoolConnection, lock: string): Promise<void> {
  try {
    await connection.query('DO RELEASE_LOCK(?)', [lock]);
    connection.release();
  } catch {
    connection.destroy();
  }
}
