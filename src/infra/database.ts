import mysql from 'mysql2/promise';
import { ConnectionError, QueryTypes, Sequelize, type Transaction } from 'sequelize';
import { DATABASE_NAME_RULE, databaseNameIn } from '../shared/database-url.js';
import { SettingError } from '../shared/setting-error.js';

/** DATABASE_URL names a database the kit cannot use: its process stops with this one line. */
export class DatabaseUrlError extends SettingError {
  readonly label = 'DATABASE_URL';
}

/** `mysql://user:pass@host:port/name` -> the database name, checked to be a plain identifier. */
export function databaseName(url: string): string {
  const name = databaseNameIn(url);
  if (name === null) throw new DatabaseUrlError(DATABASE_NAME_RULE);
  return name;
}

/**
 * merchant.md, Running it: the database is created if missing. The first connection a process makes:
 * a server that is not there or refuses the user is the setting's problem, said in one line.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const connection = await serverConnection(url);
  try {
    await connection.query(
      `CREATE DATABASE IF NOT EXISTS \`${databaseName(url)}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
    );
  } finally {
    await connection.end();
  }
}

/**
 * Stops with one line when the database DATABASE_URL names does not exist: what an operator command
 * that only reads or changes rows checks first, so that a mistyped name is said, not made (with
 * every table, and an empty answer as if nothing were wrong). Only `migrate` and the kit create it.
 */
export async function requireDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const connection = await serverConnection(url);
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>(
      'SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?',
      [name],
    );
    if (rows.length === 0)
      throw new DatabaseUrlError(
        `the database ${name} does not exist: create it with \`npm run cli -- migrate\` (or start the kit), or correct the name`,
      );
  } finally {
    await connection.end();
  }
}

/** A connection to the server DATABASE_URL names, no database chosen; one line when it cannot be had. */
async function serverConnection(url: string): Promise<mysql.Connection> {
  const u = new URL(url);
  return mysql
    .createConnection({
      host: u.hostname,
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
    })
    .catch((error: { code?: string; sqlMessage?: string }) => {
      // A server's refusal says why (never with the password); a network error's code says it all.
      const why = error.sqlMessage ? `${error.code}: ${error.sqlMessage}` : (error.code ?? String(error));
      throw new DatabaseUrlError(`cannot connect to the database (${why})`);
    });
}

/**
 * A time as a raw query's replacement: UTC (the connection's time zone) to the millisecond. Sequelize
 * writes a Date replacement to the second, so `next_poll_at <= ?` missed a row due earlier in the same
 * second, and a row written that way lost its milliseconds.
 */
export function sqlTime(at: Date): string {
  return at.toISOString().slice(0, 23).replace('T', ' ');
}

export function createSequelize(url: string): Sequelize {
  const u = new URL(url);
  return new Sequelize(databaseName(url), decodeURIComponent(u.username), decodeURIComponent(u.password), {
    host: u.hostname,
    port: Number(u.port || 3306),
    dialect: 'mysql',
    logging: false,
    timezone: '+00:00',
    pool: { max: 24, min: 0, idle: 10_000 },
    // Minor amounts fit JavaScript's safe integers: have BIGINT come back as numbers, not strings.
    dialectOptions: { supportBigNumbers: true, bigNumberStrings: false },
    define: { timestamps: false },
  });
}

/**
 * mysql2's own pool, beside Sequelize's: the receiver's batched inserts go through it, with no ORM
 * on the hot path, and the outbox's and the attempts' queries. One statement per query.
 */
export function createPool(url: string): mysql.Pool {
  return mysql.createPool(poolOptions(url, false));
}

/**
 * The pool of the order writer alone (store/order-writer.ts): the worker's reads and writes of orders,
 * attempts and the inbox, one transaction per batch of the events in hand, which sends its writes
 * and COMMIT in one round trip. Only these connections take several statements in one query: every
 * value goes through placeholders, which mysql2 escapes, and a query anywhere else that was built
 * wrong still cannot carry a second statement.
 */
export function createTransitionPool(url: string): mysql.Pool {
  return mysql.createPool(poolOptions(url, true));
}

/**
 * The connections that hold MySQL's named locks (infra/named-locks.ts), one a payment in progress or
 * waiting for its order's turn, for as long as it runs: apart, so that a burst of checkouts waiting
 * on a slow gateway never takes the connections the receiver and the worker write with. 32: the
 * gateway's budget (1,000 calls a minute) at 2 s a payment keeps about 35 in flight across every
 * process; more wait for a connection here. Opened as needed, so an idle api holds none of them
 * for long (LOCK_IDLE_SECONDS), and MySQL's max_connections (151 by default) is met only by a burst.
 */
export function createLockPool(url: string): mysql.Pool {
  return mysql.createPool({ ...poolOptions(url, false), connectionLimit: 32 });
}

function poolOptions(url: string, multipleStatements: boolean): mysql.PoolOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: databaseName(url),
    connectionLimit: 8,
    timezone: 'Z',
    // As Sequelize's: BIGINT minor amounts come back as numbers.
    supportBigNumbers: true,
    bigNumberStrings: false,
    multipleStatements,
  };
}

/** Where umzug records the migrations applied (infra/migrator.ts): one row each, its name in `name`. */
export const MIGRATIONS_TABLE = 'schema_migrations';

/**
 * Creates the database if missing and applies every pending migration (infra/migrator.ts, umzug);
 * returns their names. A schema already current, as every start but the first after an upgrade
 * finds it, is told by one query of umzug's own table, and umzug is not loaded: it loads its command
 * line with itself, a couple of hundred modules, which a CLI command that reads a table would wait
 * for (and every process of the kit at its start).
 */
export async function migrate(url: string, sequelize: Sequelize): Promise<string[]> {
  await ensureDatabase(url);
  const { MIGRATIONS } = await import('../../migrations/index.js');
  if (await allRecorded(sequelize, MIGRATIONS)) return [];
  const { migrator } = await import('./migrator.js');
  const applied = await migrator(sequelize).up();
  return applied.map((m) => m.name);
}

/** Whether umzug's table records every one of `migrations` (false while the table does not exist). */
async function allRecorded(sequelize: Sequelize, migrations: readonly { name: string }[]): Promise<boolean> {
  const recorded = await sequelize
    .query<{ name: string }>(`SELECT name FROM \`${MIGRATIONS_TABLE}\``, { type: QueryTypes.SELECT })
    .catch((error) => {
      if (errnoOf(error) === NO_SUCH_TABLE) return null;
      throw error;
    });
  if (recorded === null) return false;
  const names = new Set(recorded.map((r) => r.name));
  return migrations.every((m) => names.has(m.name));
}

// The codes with which mysql2 (or Node's socket under it) says the server cannot be reached or went away.
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
]);

/**
 * The database is down or unreachable (not a bad query): the caller may retry, so the API answers
 * 503 with Retry-After rather than a 500. Sequelize wraps these as ConnectionError; mysql2's pool
 * gives the socket's code (on the error or, through Sequelize, its parent).
 */
export function databaseUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  const e = error as { code?: unknown; parent?: { code?: unknown } } | null;
  const code = e?.code ?? e?.parent?.code;
  return typeof code === 'string' && UNREACHABLE.has(code);
}

/** MySQL's `ER_NO_SUCH_TABLE`. */
const NO_SUCH_TABLE = 1146;

/** MariaDB's deadlock: it rolled this transaction back so that another could go on. */
const DEADLOCK = 1213;
const LOCK_WAIT_TIMEOUT = 1205;
/** Either: the transaction lost a race, not a defect. */
const LOCK_CONFLICTS = new Set([DEADLOCK, LOCK_WAIT_TIMEOUT]);

/** MySQL's error number: on mysql2's error, or on the one Sequelize wraps it in. */
function errnoOf(error: unknown): number | undefined {
  const e = error as { errno?: number; parent?: { errno?: number } } | null;
  return e?.errno ?? e?.parent?.errno;
}

/** A transaction that lost a lock race with another: run again, it goes through. */
export function lockConflict(error: unknown): boolean {
  return LOCK_CONFLICTS.has(errnoOf(error) ?? 0);
}

/**
 * A managed transaction (committed if `work` resolves, rolled back if it throws), run again, up to
 * three runs in all, when MariaDB picks it as a deadlock's victim: two requests on the same rows at
 * once (an operator's capture while the worker applies a webhook to the order) must not make one of
 * them a 500. Only a deadlock: a lock wait timeout has waited 50 s already, past any caller's
 * patience. `work` must do nothing but its queries: it may run more than once.
 */
export async function transaction<T>(
  sequelize: Sequelize,
  work: (tx: Transaction) => Promise<T>,
): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await sequelize.transaction(work);
    } catch (error) {
      if (errnoOf(error) !== DEADLOCK || run >= 3) throw error;
    }
  }
}
