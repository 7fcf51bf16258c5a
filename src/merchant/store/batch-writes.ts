import type { Table } from './tables.js';

/** A statement and its placeholders' values. */
export interface Statement {
  sql: string;
  values: unknown[];
}

/** A row changed in a batch: as it stands after its changes (under the batch's lock), and what changed. */
interface ChangedRow {
  row: Record<string, unknown>;
  columns: Record<string, unknown>;
}

/**
 * The writes of one transaction of the order writer (store/order-writer.ts), gathered so that MySQL
 * gets few statements, whatever the batch holds: each row changed once, with its final values; the
 * history lines and the order events each in one multi-row INSERT, in the order they happened. Statements that must run in their place (a dispute's
 * steps) go in as they come, after the rows' updates. MySQL's time per statement is what a batch of
 * events spends most on (npm run bench).
 */
export class BatchWrites {
  readonly #rows = new Map<Table, Map<string, ChangedRow>>();
  readonly #inserts = new Map<string, Record<string, unknown>[]>();
  readonly #statements: Statement[] = [];
  readonly #last: Statement[] = [];

  /**
   * Sets these columns of a row of `table` that the batch holds locked; `row` is its record as it
   * stands after them. A later change of the same row wins, column by column.
   */
  update(table: Table, row: Record<string, unknown>, columns: Record<string, unknown>): void {
    const rows = this.#rows.get(table) ?? new Map<string, ChangedRow>();
    this.#rows.set(table, rows);
    const id = row[table.key] as string;
    rows.set(id, { row, columns: { ...rows.get(id)?.columns, ...columns } });
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
    for (const [table, rows] of this.#rows) all.push(...updatesOf(table, rows));
    all.push(...this.#statements);
    for (const [table, rows] of this.#inserts) {
      const columns = Object.keys(rows[0]!);
      all.push({
        sql: `INSERT INTO ${table} (${columns.join(', ')}) VALUES ?`,
        values: [rows.map((r) => columns.map((c) => columnValue(r[c])))],
      });
    }
    all.push(...this.#last, { sql: ending, values: [] });
    return { sql: all.map((s) => s.sql).join(';\n'), values: all.flatMap((s) => s.values) };
  }
}

/**
 * The writes of a table's changed rows. Rows that changed the same columns go together in one
 * `INSERT ... ON DUPLICATE KEY UPDATE` of those columns, keyed by the primary key: MySQL spends a
 * third of what an UPDATE a row costs (14-16 against 38-44 µs a row in a batch of 256). Every row is
 * locked by the batch, so each is there and the insert part never inserts; it names the columns an
 * INSERT must (strict mode checks them first). A row that changes a column with a unique index of
 * its own gets an UPDATE of its own, first: an insert part carrying a value another row still holds
 * would be taken for that row's duplicate. The rows that let such a value go (set it NULL) come
 * before those that take one, so an id passed between two attempts never stands on both.
 */
export function updatesOf(table: Table, rows: Map<string, ChangedRow>): Statement[] {
  const releases: Statement[] = [];
  const takes: Statement[] = [];
  const groups = new Map<string, ChangedRow[]>();
  for (const [id, changed] of rows) {
    const names = Object.keys(changed.columns).sort();
    const unique = names.filter((c) => table.uniqueColumns.includes(c));
    if (unique.length > 0) {
      // Values let go before they are taken, whichever row the batch changed first.
      const takesOne = unique.some((c) => changed.columns[c] !== null);
      (takesOne ? takes : releases).push({
        sql: `UPDATE ${table.name} SET ? WHERE ${table.key} = ?`,
        values: [columnValues(changed.columns), id],
      });
      continue;
    }
    const key = names.join(',');
    const group = groups.get(key);
    if (group) group.push(changed);
    else groups.set(key, [changed]);
  }
  const upserts: Statement[] = [];
  for (const [key, group] of groups) {
    const changedNames = key.split(',');
    const named = [
      ...table.requiredColumns,
      ...changedNames.filter((c) => !table.requiredColumns.includes(c)),
    ];
    upserts.push({
      sql: `INSERT INTO ${table.name} (${named.join(', ')}) VALUES ? ON DUPLICATE KEY UPDATE ${changedNames
        .map((c) => `${c} = VALUES(${c})`)
        .join(', ')}`,
      values: [group.map((g) => named.map((c) => columnValue(c in g.columns ? g.columns[c] : g.row[c])))],
    });
  }
  return [...releases, ...takes, ...upserts];
}

/** A value as its column takes it: objects (JSON columns) as their text. */
const columnValue = (v: unknown) =>
  v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;

/** Values for `SET ?`, each as its column takes it. */
const columnValues = (change: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(change).map(([k, v]) => [k, columnValue(v)]));
