import { expect } from 'chai';
import { BatchWrites } from '../../../src/merchant/store/batch-writes.js';
import { ATTEMPTS, ORDERS } from '../../../src/merchant/store/tables.js';

/** The row as the batch holds it: only the columns these statements may read. */
const order = (id: string, status: string) => ({
  id,
  reference: `ref-${id}`,
  amount_minor: 500,
  currency: 'EUR',
  status,
  created_at: new Date(0),
  updated_at: new Date(1000),
  version: 1,
});

describe('store: the writes of a batch of transitions', () => {
  it('rows that changed the same columns are one upsert of those columns, naming what an INSERT must', () => {
    const w = new BatchWrites();
    w.update(ORDERS, order('o1', 'paid'), { status: 'paid', version: 2 });
    w.update(ORDERS, order('o2', 'refunded'), { version: 3, status: 'refunded' });
    w.update(ORDERS, order('o3', 'paid'), { needs_review: true });
    const { sql, values } = w.text('COMMIT');
    const statements = sql.split(';\n');
    expect(statements).to.deep.equal([
      'INSERT INTO orders (id, reference, amount_minor, currency, status, created_at, updated_at, version) VALUES ? ON DUPLICATE KEY UPDATE status = VALUES(status), version = VALUES(version)',
      'INSERT INTO orders (id, reference, amount_minor, currency, status, created_at, updated_at, needs_review) VALUES ? ON DUPLICATE KEY UPDATE needs_review = VALUES(needs_review)',
      'COMMIT',
    ]);
    expect(values[0]).to.deep.equal([
      ['o1', 'ref-o1', 500, 'EUR', 'paid', new Date(0), new Date(1000), 2],
      ['o2', 'ref-o2', 500, 'EUR', 'refunded', new Date(0), new Date(1000), 3],
    ]);
    expect(values[1]).to.deep.equal([
      ['o3', 'ref-o3', 500, 'EUR', 'paid', new Date(0), new Date(1000), true],
    ]);
  });

  it('a row changed twice is written once, with both changes', () => {
    const w = new BatchWrites();
    w.update(ORDERS, order('o1', 'authorized'), { status: 'authorized' });
    w.update(ORDERS, order('o1', 'paid'), { status: 'paid', version: 3 });
    const { sql, values } = w.text('COMMIT');
    expect(sql.split(';\n')).to.have.length(2);
    expect(values[0]).to.deep.equal([['o1', 'ref-o1', 500, 'EUR', 'paid', new Date(0), new Date(1000), 3]]);
  });

  it('a row that changes a column with a unique index of its own is an UPDATE of its own, before the upserts', () => {
    const w = new BatchWrites();
    const attempt = { id: 'a1', order_id: 'o1', kind: 'redirect', status: 'paid' };
    w.update(ATTEMPTS, { ...attempt, id: 'a0' }, { status: 'paid' });
    w.update(ATTEMPTS, attempt, { payment_session_id: 'ps_1', status: 'paid' });
    const { sql } = w.text('COMMIT');
    expect(sql.split(';\n')[0]).to.equal('UPDATE payment_attempts SET ? WHERE id = ?');
    expect(sql.split(';\n')[1]).to.match(
      /^INSERT INTO payment_attempts .* ON DUPLICATE KEY UPDATE status = /,
    );
  });

  it('a unique value passed between rows: the row letting it go is written before the one taking it, whichever the batch changed first', () => {
    const w = new BatchWrites();
    const taker = { id: 'a2', order_id: 'o1', kind: 'redirect', status: 'pending' };
    // The taker changed first (an earlier event of the batch), then the session id is passed to it.
    w.update(ATTEMPTS, taker, { status: 'pending' });
    w.update(ATTEMPTS, { ...taker, id: 'a1', payment_session_id: null }, { payment_session_id: null });
    w.update(ATTEMPTS, { ...taker, payment_session_id: 'ps_1' }, { payment_session_id: 'ps_1' });
    const { sql, values } = w.text('COMMIT');
    expect(sql.split(';\n').slice(0, 2)).to.deep.equal([
      'UPDATE payment_attempts SET ? WHERE id = ?',
      'UPDATE payment_attempts SET ? WHERE id = ?',
    ]);
    expect([values[1], values[3]]).to.deep.equal(['a1', 'a2']);
    expect(values[2]).to.deep.equal({ status: 'pending', payment_session_id: 'ps_1' });
  });
});
