import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';

/**
 * One order, one writer (store/order-writer.ts): nothing else in src/ updates `orders`, inserts
 * into `order_events` or `order_history`, or rewrites an order event's body (an erasure does, through
 * the writer), however it is written (SQL text, the models, the batch writes). The two leases are the documented exceptions: the poller's `next_poll_at` (store/polls.ts),
 * and the sealed card hold, which lives on the attempts and is not matched here.
 */
const SRC = join(import.meta.dirname, '../../../src');
const WRITER = 'merchant/store/order-writer.ts';

const WRITES: readonly { what: string; pattern: RegExp }[] = [
  { what: 'UPDATE orders', pattern: /\bUPDATE\s+`?orders`?\b/gi },
  { what: 'INSERT INTO orders', pattern: /\bINSERT\s+(?:IGNORE\s+)?INTO\s+`?orders`?\s*(?:\(|SET|VALUES)/gi },
  { what: 'DELETE FROM orders', pattern: /\bDELETE\s+FROM\s+`?orders`?\b/gi },
  { what: 'INSERT INTO order_events', pattern: /\bINSERT\s+(?:IGNORE\s+)?INTO\s+`?order_events`?/gi },
  // An event's body is the order as the writer wrote it; only the writer rewrites it (an erasure).
  {
    what: "an order event's body rewritten",
    pattern: /\bUPDATE\s+`?order_events`?\s+SET\s+(?:[^;]*?[\s,])?payload\s*=/gi,
  },
  {
    what: 'a history write',
    pattern: /\b(?:INSERT\s+(?:IGNORE\s+)?INTO|UPDATE|DELETE\s+FROM)\s+`?order_history`?/gi,
  },
  {
    what: 'Order model write',
    pattern: /\bOrder\.(?:update|upsert|destroy|increment|decrement|bulkCreate)\(/g,
  },
  { what: 'History model write', pattern: /\bHistory\.(?:create|bulkCreate|update|upsert|destroy)\(/g },
  { what: 'a batch write of orders', pattern: /\.update\(\s*ORDERS\b/g },
  {
    what: 'a batch insert into order_events or order_history',
    pattern: /\.insert\(\s*['"`](?:order_events|order_history|orders)['"`]/g,
  },
  { what: "a model row's own save", pattern: /\b(?:order|orderRow)\.(?:update|save|destroy)\(/g },
];

/** The poll lease: `Order.update({ next_poll_at: ... }, ...)`, that column alone, in store/polls.ts. */
const LEASE = /^Order\.update\(\s*\{\s*next_poll_at(?::[^,}]*)?\s*\}/;

/** Every write of the order's tables in `source` (the file at `path`) that is not the writer's. */
function strayWrites(path: string, source: string): string[] {
  if (path === WRITER) return [];
  const found: string[] = [];
  for (const { what, pattern } of WRITES)
    for (const match of source.matchAll(pattern)) {
      const at = match.index ?? 0;
      if (path === 'merchant/store/polls.ts' && LEASE.test(source.slice(at))) continue;
      const line = source.slice(0, at).split('\n').length;
      found.push(`${path}:${line}: ${what}`);
    }
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('merchant: one order, one writer', () => {
  it('nothing in src/ writes orders, their history or their events (or their bodies) but the writer (and the poll lease)', () => {
    const stray = sources(SRC).flatMap((file) =>
      strayWrites(relative(SRC, file).replaceAll('\\', '/'), readFileSync(file, 'utf8')),
    );
    expect(stray, 'writes outside store/order-writer.ts').to.deep.equal([]);
  });

  it('the check finds a second writer, whichever way it writes', () => {
    const violations = [
      "await this.sequelize.query('UPDATE orders SET status = ? WHERE id = ?', { replacements });",
      'await db.query(`update `orders` set needs_review = 1`);',
      "await this.sequelize.query('INSERT INTO order_events (id, order_id) VALUES (?, ?)');",
      "await pool.query('UPDATE order_events SET payload = ? WHERE order_id = ?', [body, id]);",
      "await pool.query('UPDATE `order_events` SET fanned_out_at = ?, payload = ? WHERE seq = ?');",
      "await pool.query('INSERT INTO order_history SET ?', [row]);",
      "await pool.query('DELETE FROM order_history WHERE attempt_id = ?', [id]);",
      'await this.models.Order.update({ status: "paid" }, { where: { id } });',
      'await this.models.History.create(row, { transaction: tx });',
      'writes.update(ORDERS, after, columns);',
      "writes.insert('order_events', row);",
      // The lease, with another column beside it: not the lease any more.
      'await this.models.Order.update({ next_poll_at: at, status: "paid" }, { where: { id } });',
    ];
    for (const v of violations) expect(strayWrites('merchant/store/polls.ts', v), v).to.have.length(1);
    // The outbox's own bookkeeping of an event is not its body.
    expect(
      strayWrites(
        'merchant/store/outbox.ts',
        "db.query('UPDATE order_events SET fanned_out_at = ? WHERE seq IN (?)')",
      ),
    ).to.deep.equal([]);
    // The writer itself, and the lease alone, pass.
    expect(strayWrites(WRITER, violations.join('\n'))).to.deep.equal([]);
    expect(
      strayWrites(
        'merchant/store/polls.ts',
        'await this.models.Order.update({ next_poll_at: at }, { where });',
      ),
    ).to.deep.equal([]);
    expect(
      strayWrites('merchant/store/reviews.ts', 'await this.models.Order.update({ next_poll_at: at });'),
    ).to.have.length(1);
  });
});
