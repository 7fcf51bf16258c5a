import type { Table } from './tables.js';

/** A statement and its placeholders' values. */
export interface Statement {
  sql: string;
  values: unknown[];
}

/** A row changed in a batch (under the batch's lock): its key, and what changed. */
interface ChangedRow {
  key: unknown;
  columns: Record<string, unknown>;
  /** Its version as the batch read it (a table with a version column): what the write checks. */
  read: unknown;
}

/**
 * A row's version was not the one its batch read when the batch wrote it: someone else changed it
 * in between. Nothing of the batch is written (its statement fails before the COMMIT); the writer
 * reads the rows again and plans anew (store/order-writer.ts).
 */
export class StaleRow extends Error {
  override name = 'StaleRow';
}

/**
 * Whether `error` is the version check of a batch's update failing (updatesOf): the check sets the
 * version NULL, which its NOT NULL column refuses (ER_BAD_NULL_ERROR), naming the column.
 */
export function isStaleRow(error: unknown, table: Table): boolean {
  const e = error as { errno?: number; sqlMessage?: string } | null;
  return (
    table.version !== null &&
    e?.errno === 1048 &&
    typeof e.sqlMessage === 'string' &&
    e.sqlMessage.includes(`'${table.version}'`)
  );
}

/**
 * The writes of one transaction of the order writer (store/order-writer.ts), gathered so that MySQL
 * gets one statement a table, whatever the batch holds: the rows it creates in one INSERT, the rows
 * it changes in one UPDATE (each row once, with its final values), the history lines and the order
 * events each in one multi-row INSERT, in the order they happened. Statements that must run in their
 * place (a dispute's steps) go in as they come, after the rows' updates. MySQL's time per statement
 * is what a batch of events spends most on (npm run bench).
 */
export class BatchWrites {
  readonly #created = new Map<Table, Map<string, Record<string, unknown>>>();
  readonly #rows = new Map<Table, Map<string, ChangedRow>>();
  readonly #inserts = new Map<string, Record<string, unknown>[]>();
  readonly #statements: Statement[] = [];
  readonly #last: Statement[] = [];

  /**
   * A new row of `table`, as its full record: inserted before any row is updated. A change the batch
   * makes to it afterwards is made to the row inserted.
   */
  create(table: Table, row: Record<string, unknown>): void {
    const rows = this.#created.get(table) ?? new Map<string, Record<string, unknown>>();
    this.#created.set(table, rows);
    rows.set(row[table.key] as string, row);
  }

  /**
   * Sets these columns of a row of `table` that the batch holds locked: `before` is the row as the
   * batch held it before this change, `row` as it stands after. A later change of the same row wins,
   * column by column; the version the write checks is the one the batch first read.
   */
  update(
    table: Table,
    before: Record<string, unknown>,
    row: Record<string, unknown>,
    columns: Record<string, unknown>,
  ): void {
    const id = row[table.key] as string;
    const created = this.#created.get(table)?.get(id);
    if (created) {
      Object.assign(created, columns);
      return;
    }
    const rows = this.#rows.get(table) ?? new Map<string, ChangedRow>();
    this.#rows.set(table, rows);
    const earlier = rows.get(id);
    rows.set(id, {
      key: id,
      columns: { ...earlier?.columns, ...columns },
      read: earlier ? earlier.read : table.version === null ? null : before[table.version],
    });
  }

  /** A row to insert into `table`; every row of one table has the same columns. */
  insert(table: string, row: Record<string, unknown>): void {
    const rows = this.#inserts.get(table);
    if (rows) rows.push(row);
    else this.#inserts.set(table, [row]);
  }

  /** A statement run after the updates, in the order added. */
  statement(s: Statement): void {
    this.#statements.push(s);
  }

  /** A statement run after everything else (the inbox's processed marks). */
  last(s: Statement): void {
    this.#last.push(s);
  }

  /** Every write, in one text with its values, ending with `ending` (COMMIT). */
  text(ending: string): Statement {
    const all: Statement[] = [];
    for (const [table, rows] of this.#created) all.push(...insertsOf(table.name, [...rows.values()]));
    for (const [table, rows] of this.#rows) all.push(...updatesOf(table, rows));
    all.push(...this.#statements);
    for (const [table, rows] of this.#inserts) all.push(...insertsOf(table, rows));
    all.push(...this.#last, { sql: ending, values: [] });
    return { sql: all.map((s) => s.sql).join(';\n'), values: all.flatMap((s) => s.values) };
  }
}

/** Rows of one table in one multi-row INSERT (one per set of columns, should rows differ). */
function insertsOf(table: string, rows: readonly Record<string, unknown>[]): Statement[] {
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const row of rows) {
    const key = Object.keys(row).join(',');
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  return [...groups].map(([key, group]) => {
    const columns = key.split(',');
    return {
      sql: `INSERT INTO ${table} (${columns.join(', ')}) VALUES ?`,
      values: [group.map((r) => columns.map((c) => columnValue(r[c])))],
    };
  });
}

/**
 * The writes of a table's changed rows: one UPDATE of the table joined to a table of values, a row
 * of values a changed row (MariaDB's table value constructor, named by a WITH): its key, which of
 * the columns it sets (`batch_set`, a bit a column) and their values, and for a table with a version
 * column the version the batch read (`batch_read`). A column is set only on the rows that change it;
 * the others keep what they hold, whatever that is, so rows that changed different columns go in the
 * same statement and nothing the batch did not change is written back. The version is checked
 * first: a row whose version is not the one read gets NULL, which its NOT NULL column refuses, and
 * the statement fails (isStaleRow) before anything of the batch is committed.
 *
 * Every row is locked by the batch (an order by its locking read, its attempts through it), so each
 * is there. One row's write is checked against the unique indexes before the next: the rows that let
 * a unique value go (set it NULL, and take none) are one UPDATE of their own, first, so an id passed
 * between two attempts never stands on both.
 *
 * Against the upserts it replaced (`INSERT ... ON DUPLICATE KEY UPDATE`, one per set of columns):
 * the same MySQL CPU a row when every row changes the same columns, less when they differ (one
 * statement instead of one a set; docs/performance.md), and an upsert carries only the table's own
 * columns, so it can say neither which columns a row changed nor which version was read.
 */
export function updatesOf(table: Table, rows: Map<string, ChangedRow>): Statement[] {
  const releases: ChangedRow[] = [];
  const others: ChangedRow[] = [];
  for (const changed of rows.values()) {
    const unique = Object.keys(changed.columns).filter((c) => table.uniqueColumns.includes(c));
    const releasesOnly = unique.length > 0 && unique.every((c) => changed.columns[c] === null);
    (releasesOnly ? releases : others).push(changed);
  }
  return [releases, others].filter((g) => g.length > 0).map((g) => joinedUpdate(table, g));
}

function joinedUpdate(table: Table, rows: readonly ChangedRow[]): Statement {
  const names: string[] = [];
  for (const { columns } of rows) for (const c of Object.keys(columns)) if (!names.includes(c)) names.push(c);
  // A bit a column in a number: exact up to 2^53.
  if (names.length > 52) throw new Error(`a batch changes ${names.length} columns of ${table.name}`);
  const versioned = table.version !== null;
  const set = (c: string) => `IF(n.batch_set & ${2 ** names.indexOf(c)}, n.${c}, t.${c})`;
  const assignments = names.filter((c) => c !== table.version).map((c) => `t.${c} = ${set(c)}`);
  if (table.version !== null) {
    const v = table.version;
    const next = names.includes(v) ? set(v) : `t.${v}`;
    assignments.unshift(`t.${v} = IF(t.${v} = n.batch_read, ${next}, NULL)`);
  }
  const derived = [table.key, ...(versioned ? ['batch_read'] : []), 'batch_set', ...names];
  return {
    sql: `UPDATE ${table.name} t JOIN (WITH n (${derived.join(', ')}) AS (VALUES ?) SELECT * FROM n) n
      ON t.${table.key} = n.${table.key} SET ${assignments.join(', ')}`,
    values: [
      rows.map(({ key, columns, read }) => {
        let mask = 0;
        const values = names.map((c, i) => {
          if (!(c in columns)) return null;
          mask += 2 ** i;
          return columnValue(columns[c]);
        });
        return [key, ...(versioned ? [read] : []), mask, ...values];
      }),
    ],
  };
}

/** A value as its column takes it: objects (JSON columns) as their text. */
const columnValue = (v: unknown) =>
  v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;
