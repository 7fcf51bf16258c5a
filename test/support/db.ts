import { QueryTypes } from 'sequelize';
import type { TestKit } from './kit.js';

/**
 * What a test reads straight from the kit's tables, bypassing the store: the rows as MariaDB holds
 * them (BOOLEAN as 0/1), so an assertion sees what is stored, not what the code would make of it.
 */
type Value = string | number | null;
export type Where = Record<string, Value | readonly Value[]>;
// biome-ignore lint/suspicious/noExplicitAny: rows of every table
export type Row = Record<string, any>;

const name = (identifier: string) => {
  if (!/^[a-z_]+$/.test(identifier)) throw new Error(`not a plain identifier: ${identifier}`);
  return `\`${identifier}\``;
};

function clause(where: Where): { sql: string; replacements: Value[] } {
  const parts: string[] = [];
  const replacements: Value[] = [];
  for (const [column, value] of Object.entries(where)) {
    if (value === null) parts.push(`${name(column)} IS NULL`);
    else if (Array.isArray(value)) {
      parts.push(value.length === 0 ? 'FALSE' : `${name(column)} IN (${value.map(() => '?').join(', ')})`);
      replacements.push(...value);
    } else {
      parts.push(`${name(column)} = ?`);
      replacements.push(value as Value);
    }
  }
  return { sql: parts.length > 0 ? ` WHERE ${parts.join(' AND ')}` : '', replacements };
}

/** Rows of `table` matching `where` (equality, IS NULL, IN), in `orderBy` order when given. */
export async function rows<T extends Row = Row>(
  t: TestKit,
  table: string,
  where: Where = {},
  orderBy?: string,
): Promise<T[]> {
  const { sql, replacements } = clause(where);
  const order = orderBy ? ` ORDER BY ${name(orderBy)}` : '';
  return t.kit.sequelize.query<T>(`SELECT * FROM ${name(table)}${sql}${order}`, {
    replacements,
    type: QueryTypes.SELECT,
  });
}

/** The one row matching `where`, or null. */
export async function row<T extends Row = Row>(t: TestKit, table: string, where: Where): Promise<T | null> {
  const found = await rows<T>(t, table, where);
  if (found.length > 1) throw new Error(`${found.length} rows of ${table} match ${JSON.stringify(where)}`);
  return found[0] ?? null;
}

export async function count(t: TestKit, table: string, where: Where = {}): Promise<number> {
  const { sql, replacements } = clause(where);
  const [result] = await t.kit.sequelize.query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM ${name(table)}${sql}`,
    {
      replacements,
      type: QueryTypes.SELECT,
    },
  );
  return Number(result!.n);
}

/**
 * Resolves once another connection to `connection`'s database has had a statement running for
 * 100 ms: on a test's own database, a statement waiting for a row lock. The moment a test that makes
 * a deadlock happen asks for the waiting transaction's own row, sure of the deadlock rather than of a
 * race it may lose on a slow machine. (MariaDB's INNODB_TRX does not list such a waiting INSERT.)
 */
export async function someoneWaitsForALock(
  connection: { query: (sql: string) => Promise<[unknown, unknown]> },
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [waiting] = (await connection.query(
      `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
        WHERE ID <> CONNECTION_ID() AND DB = DATABASE() AND INFO IS NOT NULL AND TIME_MS > 100`,
    )) as [{ n: number }[], unknown];
    if (Number(waiting[0]!.n) > 0) return;
    if (Date.now() > deadline) throw new Error(`no statement waited for a lock within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
