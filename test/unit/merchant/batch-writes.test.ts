import { expect } from 'chai';
import { BatchWrites } from '../../../src/merchant/store/batch-writes.js';
import { ATTEMPTS, ORDERS } from '../../../src/merchant/store/tables.js';

/** The row as the batch holds it: only the columns these statements may read. */
const order = (id: string, status: string, version = 1) => ({
  id,
  reference: `ref-${id}`,
  amount_minor: 500,
  currency: 'EUR',
  status,
  created_at: new Date(0),
  updated_at: new Date(1000),
  version,
});

/** The statements of a text, and the rows of values of its first. */
function written(w: BatchWrites) {
  const { sql, values } = w.text('COMMIT');
  return { statements: sql.split(';\n'), rows: values[0] as unknown[][], values };
}

describe('store: the writes of a batch of transitions', () => {
  it('the rows of a table are one UPDATE, whatever columns each changed: each column set on the rows that change it alone', () => {
    const w = new BatchWrites();
    w.update(ORDERS, order('o1', 'authorized'), order('o1', 'paid', 2), { status: 'paid', version: 2 });
    w.update(ORDERS, order('o2', 'paid', 2), order('o2', 'refunded', 3), { version: 3, status: 'refunded' });
    w.update(ORDERS, order('o3', 'paid', 5), order('o3', 'paid', 6), { needs_review: true, version: 6 });
    const { statements, rows } = written(w);
    expect(statements).to.have.length(2);
    expect(statements[0]).to.match(
      /^UPDATE orders t JOIN \(WITH n \(id, batch_read, batch_set, status, version, needs_review\) AS \(VALUES \?\)/,
    );
    expect(statements[0]).to.include('t.status = IF(n.batch_set & 1, n.status, t.status)');
    expect(statements[0]).to.include('t.needs_review = IF(n.batch_set & 4, n.needs_review, t.needs_review)');
    expect(statements[1]).to.equal('COMMIT');
    // Its key, the version read, which columns it sets (status 1, version 2, needs_review 4), their values.
    expect(rows).to.deep.equal([
      ['o1', 1, 3, 'paid', 2, null],
      ['o2', 2, 3, 'refunded', 3, null],
      ['o3', 5, 6, null, 6, true],
    ]);
  });

  it('the version is checked before anything is set: a row whose version is not the one read fails the statement', () => {
    const w = new BatchWrites();
    w.update(ORDERS, order('o1', 'authorized'), order('o1', 'paid', 2), { status: 'paid', version: 2 });
    const { statements } = written(w);
    expect(statements[0]).to.match(
      /SET t\.version = IF\(t\.version = n\.batch_read, IF\(n\.batch_set & 2, n\.version, t\.version\), NULL\), t\.status = /,
    );
  });

  it('a row changed twice is written once, with both changes, checked against the version first read', () => {
    const w = new BatchWrites();
    w.update(ORDERS, order('o1', 'pending', 1), order('o1', 'authorized', 2), {
      status: 'authorized',
      version: 2,
    });
    w.update(ORDERS, order('o1', 'authorized', 2), order('o1', 'paid', 3), { status: 'paid', version: 3 });
    const { statements, rows } = written(w);
    expect(statements).to.have.length(2);
    expect(rows).to.deep.equal([['o1', 1, 3, 'paid', 3]]);
  });

  it('a table without a version column is updated without a check', () => {
    const w = new BatchWrites();
    const attempt = { id: 'a1', order_id: 'o1', kind: 'card', status: 'pending' };
    w.update(ATTEMPTS, attempt, { ...attempt, status: 'paid' }, { status: 'paid' });
    const { statements, rows } = written(w);
    expect(statements[0]).to.match(/^UPDATE payment_attempts t JOIN \(WITH n \(id, batch_set, status\)/);
    expect(statements[0]).not.to.include('batch_read');
    expect(rows).to.deep.equal([['a1', 1, 'paid']]);
  });

  it('a row that takes a unique value is in the same UPDATE as the others', () => {
    const w = new BatchWrites();
    const attempt = { id: 'a1', order_id: 'o1', kind: 'redirect', status: 'pending' };
    w.update(
      ATTEMPTS,
      { ...attempt, id: 'a0' },
      { ...attempt, id: 'a0', status: 'paid' },
      { status: 'paid' },
    );
    w.update(
      ATTEMPTS,
      attempt,
      { ...attempt, payment_session_id: 'ps_1', status: 'paid' },
      {
        payment_session_id: 'ps_1',
        status: 'paid',
      },
    );
    const { statements, rows } = written(w);
    expect(statements).to.have.length(2);
    expect(rows).to.deep.equal([
      ['a0', 1, 'paid', null],
      ['a1', 3, 'paid', 'ps_1'],
    ]);
  });

  it('a unique value passed between rows: the rows letting it go are written before the one taking it, whichever the batch changed first', () => {
    const w = new BatchWrites();
    const taker = { id: 'a2', order_id: 'o1', kind: 'redirect', status: 'pending', payment_session_id: null };
    const giver = { ...taker, id: 'a1', payment_session_id: 'ps_1' };
    // The taker changed first (an earlier event of the batch), then the session id is passed to it.
    w.update(ATTEMPTS, taker, taker, { status: 'pending' });
    w.update(ATTEMPTS, giver, { ...giver, payment_session_id: null }, { payment_session_id: null });
    w.update(ATTEMPTS, taker, { ...taker, payment_session_id: 'ps_1' }, { payment_session_id: 'ps_1' });
    const { sql, values } = w.text('COMMIT');
    const [release, take] = sql.split(';\n');
    expect(release).to.match(
      /^UPDATE payment_attempts t JOIN \(WITH n \(id, batch_set, payment_session_id\)/,
    );
    expect(take).to.match(
      /^UPDATE payment_attempts t JOIN \(WITH n \(id, batch_set, status, payment_session_id\)/,
    );
    expect(values).to.deep.equal([[['a1', 1, null]], [['a2', 3, 'pending', 'ps_1']]]);
  });

  it('a row the batch creates is inserted first, with the changes made to it after', () => {
    const w = new BatchWrites();
    const attempt = { id: 'a1', order_id: 'o1', kind: 'card', status: 'pending' };
    w.create(ATTEMPTS, { ...attempt });
    w.update(ATTEMPTS, attempt, { ...attempt, status: 'paid' }, { status: 'paid' });
    const { statements, rows } = written(w);
    expect(statements).to.deep.equal([
      'INSERT INTO payment_attempts (id, order_id, kind, status) VALUES ?',
      'COMMIT',
    ]);
    expect(rows).to.deep.equal([['a1', 'o1', 'card', 'paid']]);
  });

  it('the history lines and the order events are one INSERT each, after the updates', () => {
    const w = new BatchWrites();
    w.insert('order_history', { order_id: 'o1', outcome: 'applied' });
    w.update(ORDERS, order('o1', 'pending'), order('o1', 'paid', 2), { status: 'paid', version: 2 });
    w.insert('order_events', { id: 'oev_1', order_id: 'o1' });
    w.insert('order_history', { order_id: 'o2', outcome: 'duplicate' });
    w.insert('order_events', { id: 'oev_2', order_id: 'o2' });
    const { sql, values } = w.text('COMMIT');
    expect(sql.split(';\n').map((s) => s.split(' (')[0])).to.deep.equal([
      'UPDATE orders t JOIN',
      'INSERT INTO order_history',
      'INSERT INTO order_events',
      'COMMIT',
    ]);
    expect(values.slice(1)).to.deep.equal([
      [
        ['o1', 'applied'],
        ['o2', 'duplicate'],
      ],
      [
        ['oev_1', 'o1'],
        ['oev_2', 'o2'],
      ],
    ]);
  });
});
