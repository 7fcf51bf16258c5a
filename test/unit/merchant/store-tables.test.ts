import { expect } from 'chai';
import type { OrderStatus } from '../../../src/merchant/orders/status.js';
import type { AttemptRecord, InboxRecord, OrderRecord } from '../../../src/merchant/store/records.js';
import {
  ATTEMPTS,
  attributesOf,
  INBOX,
  ORDERS,
  recordFrom,
  selectList,
  type Table,
} from '../../../src/merchant/store/tables.js';

// What the compiler is told of the records, checked by `tsc`: the narrow types come from the
// description, and the hidden columns are no part of the record.
type Is<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const typed: [
  Is<OrderRecord['status'], OrderStatus>,
  Is<OrderRecord['customer'], Record<string, unknown> | null>,
  Is<OrderRecord['needs_review'], boolean>,
  Is<OrderRecord['next_poll_at'], Date | null>,
  Is<AttemptRecord['kind'], 'card' | 'redirect'>,
  Is<AttemptRecord['mode'], 'sale' | 'auth' | null>,
  Is<AttemptRecord['refunded_minor'], number>,
  Is<'hold_sealed' extends keyof AttemptRecord ? 1 : 0, 0>,
  Is<'hold_expires_at' extends keyof AttemptRecord ? 1 : 0, 0>,
  Is<InboxRecord['receipt'], string | null>,
] = [true, true, true, true, true, true, true, true, true, true];

const at = new Date('2026-11-24T10:00:00.123Z');

/** An order's row as mysql2 answers it from MariaDB: BOOLEAN as 0/1, JSON as its text. */
const orderRow = (over: Record<string, unknown> = {}) => ({
  id: 'ord_1',
  merchant_id: 1001,
  reference: 'ref-1',
  amount_minor: 1234,
  currency: 'EUR',
  description: null,
  customer: '{"email":"a@example.com","tags":["x"]}',
  status: 'paid',
  captured_minor: 1234,
  refunded_minor: 0,
  disputed_minor: 0,
  failure_code: null,
  needs_review: 1,
  review_reason: 'a reason',
  resolved_reasons: null,
  review_resolution: null,
  review_resolved_by: null,
  review_resolved_at: null,
  current_attempt_id: 'att_1',
  version: 3,
  next_poll_at: null,
  closed_reason: null,
  closed_at: null,
  created_at: at,
  updated_at: at,
  ...over,
});

describe('merchant: the hot tables described once (store/tables.ts)', () => {
  it('compiles the record types from the description', () => {
    expect(typed.every(Boolean)).to.equal(true);
  });

  it('a raw order row becomes its record: 0/1 a boolean, JSON text its value, nulls kept', () => {
    const record = recordFrom(ORDERS, orderRow());
    expect(record).to.deep.equal({
      ...orderRow(),
      customer: { email: 'a@example.com', tags: ['x'] },
      needs_review: true,
    });
    expect(Object.getPrototypeOf(record)).to.equal(Object.prototype);
    expect(recordFrom(ORDERS, orderRow({ needs_review: 0, customer: null }))).to.include({
      needs_review: false,
      customer: null,
    });
    // A value already converted (a model's plain row) stays as it is.
    const customer = { email: 'b@example.com' };
    expect(recordFrom(ORDERS, orderRow({ needs_review: true, customer })).customer).to.equal(customer);
  });

  it("an attempt's record leaves the sealed hold and anything else the row carries behind", () => {
    const row = Object.fromEntries(Object.keys(ATTEMPTS.columns).map((c) => [c, `${c}-value`]));
    const record = recordFrom(ATTEMPTS, { ...row, reference: 'from-a-join' });
    expect(record).to.not.have.property('hold_sealed');
    expect(record).to.not.have.property('hold_expires_at');
    expect(record).to.not.have.property('reference');
    expect(Object.keys(record)).to.deep.equal(ATTEMPTS.recordColumns);
    expect(ATTEMPTS.hiddenColumns).to.deep.equal(['hold_sealed', 'hold_expires_at']);
    expect(selectList(ATTEMPTS, 'a')).to.not.include('hold_');
    expect(selectList(ATTEMPTS, 'a').split(', ')).to.deep.equal(ATTEMPTS.recordColumns.map((c) => `a.${c}`));
  });

  it("every column is in the model's attributes, new objects each call (Sequelize writes into them)", () => {
    for (const t of [ORDERS, ATTEMPTS, INBOX] as Table[]) {
      const one = attributesOf(t);
      const two = attributesOf(t);
      expect(Object.keys(one), t.name).to.deep.equal(Object.keys(t.columns));
      for (const name of Object.keys(one)) expect(one[name], `${t.name}.${name}`).to.not.equal(two[name]);
    }
    expect(attributesOf(ORDERS).needs_review).to.include({ allowNull: false, defaultValue: false });
    expect(attributesOf(ORDERS).id).to.include({ primaryKey: true });
    expect(attributesOf(INBOX).repeats).to.include({ allowNull: false, defaultValue: 0 });
    expect(attributesOf(ATTEMPTS).mode).to.include({ allowNull: true }).and.not.have.property('defaultValue');
  });
});
