import { expect } from 'chai';
import { validate } from '../../../src/merchant/http/errors.js';
import { reportQuerySchema } from '../../../src/merchant/http/report-routes.js';
import { attachSchema, auditQuerySchema, orderListQuerySchema } from '../../../src/merchant/http/schemas.js';

/** A 422's words for a field: what is wrong with what was sent, not what a missing field would get. */
describe('merchant: the messages of a refused field (validate)', () => {
  const errorsOf = (...args: Parameters<typeof validate>) => {
    const result = validate(...args);
    expect(result.ok).to.equal(false);
    return (result as { errors: Record<string, string[]> }).errors;
  };
  /** A query as koa gives it: a name given twice is an array of its values. */
  const query = (text: string) => {
    const out: Record<string, string | string[]> = {};
    for (const key of new Set(new URLSearchParams(text).keys())) {
      const all = new URLSearchParams(text).getAll(key);
      out[key] = all.length === 1 ? all[0]! : all;
    }
    return out;
  };

  it('a field given with another type says so, not that it is required', () => {
    expect(errorsOf(attachSchema, JSON.parse('{"order_id":12}'))).to.deep.equal({
      order_id: ['must be a string'],
    });
    expect(errorsOf(attachSchema, { order_id: null }).order_id).to.deep.equal(['must be a string']);
    expect(errorsOf(attachSchema, { order_id: { id: 'ord_1' } }).order_id).to.deep.equal([
      'must be a string',
    ]);
    // Left out, it is still required, with the schema's words for why.
    expect(errorsOf(attachSchema, {}).order_id).to.deep.equal([
      'is required: the id of the order the money belongs to',
    ]);
  });

  it('a query parameter given twice says so, whatever the field', () => {
    const twice = 'is given more than once; send it once';
    expect(
      errorsOf(auditQuerySchema, query('from=2026-11-01&from=2026-11-02&to=2026-12-01'), { query: true }),
    ).to.deep.equal({ from: [twice] });
    expect(
      errorsOf(reportQuerySchema, query('from=2026-11-01&to=2026-12-01&format=csv&format=json'), {
        query: true,
      }),
    ).to.deep.equal({ format: [twice] });
    expect(errorsOf(orderListQuerySchema, query('status=paid&status=failed'), { query: true })).to.deep.equal(
      {
        status: [twice],
      },
    );
    // Once, a bad value is still named for what is wrong with it; a body's array is a wrong type.
    expect(errorsOf(auditQuerySchema, query('to=2026-12-01'), { query: true }).from![0]).to.match(
      /^is required/,
    );
    expect(errorsOf(attachSchema, { order_id: ['ord_1', 'ord_2'] }).order_id).to.deep.equal([
      'must be a string',
    ]);
  });
});
