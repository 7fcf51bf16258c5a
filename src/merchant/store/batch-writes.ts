/** A statement and its placeholders' values. */
export interface Statement {
  sql: string;
  values: unknown[];
}

/**
 * The writes of one transaction of the order transitions (store/orders.ts), gathered so that MySQL
 * gets few statements, whatever the batch holds: each row changed once, with its final values; the
 * history lines and the order events each in one multi-row INSERT, in the order they happened. Statements that must run in their place (a dispute's
 * steps) go in as they come, after the rows' updates. MySQL's time per statement is what a batch of
 * events spends most on (npm run bench).
 */
export class BatchWrites {
  readonly #rows = new Map<string, Map<string, Record<string, unknown>>>();
  readonly #inserts = new Map<string, Record<string, unknown>[]>();
  readonly #statements: Statement[] = [];
  readonly #last: Statement[] = [];

  /** Sets these columns of the row `id` of `table`; a later change of the same column wins. */
  update(table: string, id: string, columns: Record<string, unknown>): void {
    const rows = this.#rows.get(table) ?? new Map<string, Record<string, unknown>>();
    this.#rows.set(table, rows);
    rows.set(id, { ...rows.get(id), ...columns });
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
 * The UPDATEs of a table's changed rows, keyed by `id`: one each, with the row's final values. (One
 * UPDATE for many rows, a CASE on the id per column, costs MySQL more as the batch grows: each row
 * reads through every branch.)
 */
export function updatesOf(table: string, rows: Map<string, Record<string, unknown>>): Statement[] {
  return [...rows].map(([id, columns]) => ({
    sql: `UPDATE ${table} SET ? WHERE id = ?`,
    values: [columnValues(columns), id],
  }));
}

/** A value as its column takes it: objects (JSON columns) as their text. */
const columnValue = (v: unknown) =>
  v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;

/** Values for `SET ?`, each as its column takes it. */
const columnValues = (change: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(change).map(([k, v]) => [k, columnValue(v)]));
