import { expect } from 'chai';
import {
  type Answer,
  type CallOptions,
  OTHER_MERCHANT_KEY,
  PARTNER_KEY,
  startGateway,
  type TestGateway,
  transactionBody,
} from '../../support/gateway.js';

type Operation = 'capture' | 'refund' | 'void';

describe('gateway: capture, refund, void and status (sandbox.md section 6)', () => {
  let t: TestGateway;

  before(async () => {
    t = await startGateway();
  });

  after(async () => {
    await t.close();
  });

  /** Every answer of this file, errors included, must carry X-RateLimit-Remaining. */
  async function call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    const res = await t.call(method, path, options);
    const remaining = res.headers.get('x-ratelimit-remaining');
    expect(remaining, `X-RateLimit-Remaining on ${method} ${path} (${res.status})`).to.match(/^\d+$/);
    return res;
  }

  const transactionCount = () => t.gateway.deps.state.transactions.size;

  async function initiate(type: 'sale' | 'auth', amount: number, currency = 'EUR', key?: string) {
    const res = await call('POST', '/api/v1/transactions', {
      body: transactionBody({ transaction_type: type, amount, currency }),
      ...(key === undefined ? {} : { key }),
    });
    expect(res.status, res.text).to.equal(200);
    return res.body.data as { id: number; amount: number; status: string; currency: string };
  }

  function operate(
    id: number | string,
    operation: Operation,
    body: unknown,
    key?: string | null,
  ): Promise<Answer> {
    return call('POST', `/api/v1/transactions/${id}/${operation}`, {
      body,
      ...(key === undefined ? {} : { key }),
    });
  }

  async function status(id: number | string, key?: string) {
    const res = await call('GET', `/api/v1/transactions/${id}/status`, key === undefined ? {} : { key });
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  }

  function expectError(res: Answer, httpStatus: number, code: string): void {
    expect(res.status, `${res.status} ${res.text}`).to.equal(httpStatus);
    expect(res.body.success).to.equal(false);
    expect(res.body.code).to.equal(code);
  }

  /** A successful operation: the new record under data.transaction. */
  function created(res: Answer) {
    expect(res.status, `${res.status} ${res.text}`).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.code).to.equal('');
    expect(res.body.data.transaction, res.text).to.be.an('object');
    return res.body.data.transaction;
  }

  /** The status, amounts and count stay what they were across a refused request. */
  async function expectUnchanged(id: number, refused: () => Promise<void>): Promise<void> {
    const before = await status(id);
    const count = transactionCount();
    await refused();
    const after = await status(id);
    expect(after.status).to.equal(before.status);
    expect(after.refunded_amount).to.equal(before.refunded_amount);
    expect(after.amount).to.equal(before.amount);
    expect(transactionCount()).to.equal(count);
  }

  describe('capture', () => {
    it('captures an auth in full: a capture record under data.transaction, the auth becomes captured', async () => {
      const auth = await initiate('auth', 25);
      const capture = created(await operate(auth.id, 'capture', { amount: 25 }));
      expect(capture.transaction_type).to.equal('capture');
      expect(capture.status).to.equal('captured');
      expect(capture.related_trans_id).to.equal(auth.id);
      expect(capture.id).to.be.a('number').and.not.equal(auth.id);
      expect(capture.amount).to.equal(2500);
      expect(capture.currency).to.equal('EUR');
      expect(capture.merchant_id).to.equal(1001);
      const parent = await status(auth.id);
      expect(parent.status).to.equal('captured');
      expect(parent.transaction_type).to.equal('auth');
      const record = await status(capture.id);
      expect(record.transaction_type).to.equal('capture');
      expect(record.related_trans_id).to.equal(auth.id);
    });

    it('allows a partial capture', async () => {
      const auth = await initiate('auth', 10);
      const capture = created(await operate(auth.id, 'capture', { amount: 4.5 }));
      expect(capture.amount).to.equal(450);
      expect(capture.related_trans_id).to.equal(auth.id);
      expect((await status(auth.id)).status).to.equal('captured');
    });

    it('captures JPY in whole yen', async () => {
      const auth = await initiate('auth', 500, 'JPY');
      const capture = created(await operate(auth.id, 'capture', { amount: 300 }));
      expect(capture.amount).to.equal(300);
      expect(capture.currency).to.equal('JPY');
    });

    it('refuses a second capture with 400 ERR_INVALID_TRANSACTION', async () => {
      const auth = await initiate('auth', 10);
      created(await operate(auth.id, 'capture', { amount: 4 }));
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'capture', { amount: 4 }), 400, 'ERR_INVALID_TRANSACTION');
        expectError(await operate(auth.id, 'capture', { amount: 6 }), 400, 'ERR_INVALID_TRANSACTION');
      });
    });

    it('refuses a capture over the authorised amount with 400 ERR_ADAPTER_INVALID_AMOUNT; the auth stays open', async () => {
      const auth = await initiate('auth', 10);
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'capture', { amount: 10.01 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
      });
      expect((await status(auth.id)).status).to.equal('auth');
      created(await operate(auth.id, 'capture', { amount: 10 }));
    });

    it('refuses a capture on a sale with 400 ERR_INVALID_TRANSACTION', async () => {
      const sale = await initiate('sale', 10);
      await expectUnchanged(sale.id, async () => {
        expectError(await operate(sale.id, 'capture', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
      });
    });

    it('refuses a capture on a voided auth with 400 ERR_INVALID_TRANSACTION', async () => {
      const auth = await initiate('auth', 10);
      created(await operate(auth.id, 'void', { amount: 10 }));
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'capture', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
      });
    });
  });

  describe('refund', () => {
    it('refunds a sale in parts up to the captured amount, keeping a running refunded_amount', async () => {
      const sale = await initiate('sale', 10);

      const first = created(await operate(sale.id, 'refund', { amount: 3, reason: 'one item back' }));
      expect(first.transaction_type).to.equal('refund');
      expect(first.status).to.equal('refunded');
      expect(first.related_trans_id).to.equal(sale.id);
      expect(first.amount).to.equal(300);
      let parent = await status(sale.id);
      expect(parent.status).to.equal('captured');
      expect(parent.refunded_amount).to.equal(300);

      const second = created(await operate(sale.id, 'refund', { amount: 5 }));
      expect(second.amount).to.equal(500);
      expect(second.id).not.to.equal(first.id);
      parent = await status(sale.id);
      expect(parent.status).to.equal('captured');
      expect(parent.refunded_amount).to.equal(800);

      await expectUnchanged(sale.id, async () => {
        expectError(await operate(sale.id, 'refund', { amount: 2.01 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
      });

      created(await operate(sale.id, 'refund', { amount: 2 }));
      parent = await status(sale.id);
      expect(parent.status).to.equal('refunded');
      expect(parent.refunded_amount).to.equal(1000);

      await expectUnchanged(sale.id, async () => {
        expectError(await operate(sale.id, 'refund', { amount: 0.01 }), 400, 'ERR_INVALID_TRANSACTION');
      });
    });

    it('refunds a sale in full at once', async () => {
      const sale = await initiate('sale', 12.34);
      const refund = created(await operate(sale.id, 'refund', { amount: 12.34 }));
      expect(refund.amount).to.equal(1234);
      const parent = await status(sale.id);
      expect(parent.status).to.equal('refunded');
      expect(parent.refunded_amount).to.equal(1234);
    });

    it('refuses a refund over the sale amount with 400 ERR_ADAPTER_INVALID_AMOUNT', async () => {
      const sale = await initiate('sale', 10);
      await expectUnchanged(sale.id, async () => {
        expectError(await operate(sale.id, 'refund', { amount: 10.01 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
      });
    });

    it('shares one running total between the auth id and the capture id; only the captured amount is refundable', async () => {
      const auth = await initiate('auth', 10);
      const capture = created(await operate(auth.id, 'capture', { amount: 6 }));

      const viaAuth = created(await operate(auth.id, 'refund', { amount: 2 }));
      expect(viaAuth.related_trans_id).to.equal(auth.id);
      expect(viaAuth.amount).to.equal(200);
      expect((await status(auth.id)).refunded_amount).to.equal(200);

      const viaCapture = created(await operate(capture.id, 'refund', { amount: 3 }));
      expect(viaCapture.related_trans_id).to.equal(capture.id);
      expect(viaCapture.amount).to.equal(300);
      let parent = await status(auth.id);
      expect(parent.status).to.equal('captured');
      expect(parent.refunded_amount).to.equal(500);
      expect((await status(capture.id)).refunded_amount).to.equal(500);

      // 1.00 of the 6.00 captured is left; the 4.00 released by the partial capture is not refundable.
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'refund', { amount: 1.01 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
        expectError(await operate(capture.id, 'refund', { amount: 2 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
      });

      created(await operate(capture.id, 'refund', { amount: 1 }));
      parent = await status(auth.id);
      expect(parent.status).to.equal('refunded');
      expect(parent.refunded_amount).to.equal(600);
      const captureRecord = await status(capture.id);
      expect(captureRecord.refunded_amount).to.equal(600);

      expectError(await operate(auth.id, 'refund', { amount: 0.01 }), 400, 'ERR_INVALID_TRANSACTION');
      expectError(await operate(capture.id, 'refund', { amount: 0.01 }), 400, 'ERR_INVALID_TRANSACTION');
    });

    it('refuses a refund on an uncaptured auth with 400 ERR_INVALID_TRANSACTION', async () => {
      const auth = await initiate('auth', 10);
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'refund', { amount: 1 }), 400, 'ERR_INVALID_TRANSACTION');
      });
      expect((await status(auth.id)).status).to.equal('auth');
    });

    it('refuses a refund on a voided auth, and on a refund record, with 400 ERR_INVALID_TRANSACTION', async () => {
      const auth = await initiate('auth', 10);
      const voided = created(await operate(auth.id, 'void', { amount: 10 }));
      expectError(await operate(auth.id, 'refund', { amount: 1 }), 400, 'ERR_INVALID_TRANSACTION');
      expectError(await operate(voided.id, 'refund', { amount: 1 }), 400, 'ERR_INVALID_TRANSACTION');

      const sale = await initiate('sale', 10);
      const refund = created(await operate(sale.id, 'refund', { amount: 1 }));
      await expectUnchanged(sale.id, async () => {
        expectError(await operate(refund.id, 'refund', { amount: 1 }), 400, 'ERR_INVALID_TRANSACTION');
      });
    });
  });

  describe('void', () => {
    it('voids an auth for exactly the authorised amount: a void record, the auth becomes voided', async () => {
      const auth = await initiate('auth', 10);
      const voided = created(await operate(auth.id, 'void', { amount: 10, reason: 'customer cancelled' }));
      expect(voided.transaction_type).to.equal('void');
      expect(voided.status).to.equal('voided');
      expect(voided.related_trans_id).to.equal(auth.id);
      expect(voided.amount).to.equal(1000);
      expect((await status(auth.id)).status).to.equal('voided');
    });

    it('refuses a void for another amount with 400 ERR_ADAPTER_INVALID_AMOUNT', async () => {
      const auth = await initiate('auth', 10);
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'void', { amount: 9.99 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
        expectError(await operate(auth.id, 'void', { amount: 10.01 }), 400, 'ERR_ADAPTER_INVALID_AMOUNT');
      });
      expect((await status(auth.id)).status).to.equal('auth');
    });

    it('refuses a void on a captured auth with 400 ERR_INVALID_TRANSACTION', async () => {
      const auth = await initiate('auth', 10);
      created(await operate(auth.id, 'capture', { amount: 10 }));
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'void', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
      });
      expect((await status(auth.id)).status).to.equal('captured');
    });

    it('refuses a void on a sale with 400 ERR_INVALID_TRANSACTION', async () => {
      const sale = await initiate('sale', 10);
      await expectUnchanged(sale.id, async () => {
        expectError(await operate(sale.id, 'void', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
      });
    });

    it('refuses a second void with 400 ERR_INVALID_TRANSACTION', async () => {
      const auth = await initiate('auth', 10);
      created(await operate(auth.id, 'void', { amount: 10 }));
      await expectUnchanged(auth.id, async () => {
        expectError(await operate(auth.id, 'void', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
      });
    });
  });

  describe('records that are not open', () => {
    it('refuses capture, refund and void on a declined (failed) transaction with 400 ERR_INVALID_TRANSACTION', async () => {
      for (const type of ['auth', 'sale']) {
        const declined = await call('POST', '/api/v1/transactions', {
          body: transactionBody({
            transaction_type: type,
            amount: 10,
            card: { ...transactionBody().card, number: '4000000000000002' },
          }),
        });
        expectError(declined, 400, 'ERR_CARD_DO_NOT_HONOR');
        const id = declined.body.data.id as number;
        await expectUnchanged(id, async () => {
          expectError(await operate(id, 'capture', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
          expectError(await operate(id, 'refund', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
          expectError(await operate(id, 'void', { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
        });
        expect((await status(id)).status).to.equal('failed');
      }
    });

    it('refuses capture, refund and void on a risk-cancelled transaction with 400 ERR_INVALID_TRANSACTION', async () => {
      const cancelled = await call('POST', '/api/v1/transactions', {
        body: transactionBody({ transaction_type: 'auth', amount: 10, customer: { email: 'eve@risk.test' } }),
      });
      expectError(cancelled, 400, 'ERR_RISK_REJECTED');
      const record = [...t.gateway.deps.state.transactions.values()].at(-1)!;
      expect(record.status).to.equal('cancelled');
      await expectUnchanged(record.id, async () => {
        for (const operation of ['capture', 'refund', 'void'] as Operation[]) {
          expectError(await operate(record.id, operation, { amount: 10 }), 400, 'ERR_INVALID_TRANSACTION');
        }
      });
    });
  });

  describe('concurrent operations', () => {
    it('two concurrent captures of one auth: exactly one succeeds', async () => {
      const auth = await initiate('auth', 10);
      const answers = await Promise.all([
        operate(auth.id, 'capture', { amount: 10 }),
        operate(auth.id, 'capture', { amount: 10 }),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).to.deep.equal([200, 400]);
      expect(answers.find((a) => a.status === 400)!.body.code).to.equal('ERR_INVALID_TRANSACTION');
      const captures = [...t.gateway.deps.state.transactions.values()].filter(
        (x) => x.type === 'capture' && x.relatedId === auth.id,
      );
      expect(captures).to.have.length(1);
    });

    it('concurrent refunds never exceed the captured amount', async () => {
      const sale = await initiate('sale', 10);
      const answers = await Promise.all([
        operate(sale.id, 'refund', { amount: 6 }),
        operate(sale.id, 'refund', { amount: 6 }),
      ]);
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 400]);
      expect(answers.find((a) => a.status === 400)!.body.code).to.equal('ERR_ADAPTER_INVALID_AMOUNT');
      const parent = await status(sale.id);
      expect(parent.refunded_amount).to.equal(600);
      expect(parent.status).to.equal('captured');
    });
  });

  describe('visibility and keys', () => {
    const bodies: Record<Operation, unknown> = {
      capture: { amount: 10 },
      refund: { amount: 1, reason: 'r' },
      void: { amount: 10, reason: 'r' },
    };

    it("answers another merchant's transaction with 404 ERR_NOT_FOUND on capture, refund, void and status", async () => {
      const auth = await initiate('auth', 10);
      const sale = await initiate('sale', 10);
      await expectUnchanged(auth.id, async () => {
        for (const [id, operation] of [
          [auth.id, 'capture'],
          [sale.id, 'refund'],
          [auth.id, 'void'],
        ] as [number, Operation][]) {
          expectError(
            await operate(id, operation, bodies[operation], OTHER_MERCHANT_KEY),
            404,
            'ERR_NOT_FOUND',
          );
        }
        const res = await call('GET', `/api/v1/transactions/${auth.id}/status`, { key: OTHER_MERCHANT_KEY });
        expectError(res, 404, 'ERR_NOT_FOUND');
      });
      expect((await status(sale.id)).refunded_amount).to.equal(0);
    });

    it('answers a nonexistent or non-numeric id with 404 ERR_NOT_FOUND', async () => {
      const count = transactionCount();
      for (const id of ['999999999', 'abc', '12ab']) {
        for (const operation of ['capture', 'refund', 'void'] as Operation[]) {
          expectError(await operate(id, operation, bodies[operation]), 404, 'ERR_NOT_FOUND');
        }
        expectError(await call('GET', `/api/v1/transactions/${id}/status`), 404, 'ERR_NOT_FOUND');
      }
      expect(transactionCount()).to.equal(count);
    });

    it('refuses a partner key on capture, refund and void with 403 ERR_AUTH_FAILED', async () => {
      const auth = await initiate('auth', 10);
      const sale = await initiate('sale', 10);
      await expectUnchanged(auth.id, async () => {
        for (const [id, operation] of [
          [auth.id, 'capture'],
          [sale.id, 'refund'],
          [auth.id, 'void'],
        ] as [number, Operation][]) {
          expectError(await operate(id, operation, bodies[operation], PARTNER_KEY), 403, 'ERR_AUTH_FAILED');
          const withMerchant = { ...(bodies[operation] as object), merchant_id: 1001 };
          expectError(await operate(id, operation, withMerchant, PARTNER_KEY), 403, 'ERR_AUTH_FAILED');
        }
      });
      expect((await status(sale.id)).refunded_amount).to.equal(0);
    });

    it("lets a partner key read the status of a linked merchant's transaction (200)", async () => {
      const sale = await initiate('sale', 10);
      const viaPartner = await status(sale.id, PARTNER_KEY);
      expect(viaPartner.id).to.equal(sale.id);
      expect(viaPartner.merchant_id).to.equal(1001);
      expect(viaPartner.status).to.equal('captured');
      expect(viaPartner.amount).to.equal(1000);
    });

    it("answers a partner key reading an unlinked merchant's transaction with 404", async () => {
      const other = await initiate('sale', 10, 'EUR', OTHER_MERCHANT_KEY);
      const res = await call('GET', `/api/v1/transactions/${other.id}/status`, { key: PARTNER_KEY });
      expectError(res, 404, 'ERR_NOT_FOUND');
    });

    it('status returns the record directly in data', async () => {
      const auth = await initiate('auth', 10);
      const res = await call('GET', `/api/v1/transactions/${auth.id}/status`);
      expect(res.status).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.data.id).to.equal(auth.id);
      expect(res.body.data.status).to.equal('auth');
      expect(res.body.data.amount).to.equal(1000);
    });
  });

  describe('amount validation (422 ERR_VALIDATION_FAILED, errors.amount)', () => {
    const badAmounts: [string, Record<string, unknown>][] = [
      ['missing', {}],
      ['too many decimals for EUR (1.005)', { amount: 1.005 }],
      ['negative', { amount: -1 }],
      ['zero', { amount: 0 }],
      ['not a number', { amount: 'ten' }],
    ];
    for (const operation of ['capture', 'refund', 'void'] as Operation[]) {
      for (const [name, body] of badAmounts) {
        it(`${operation}: an amount ${name}`, async () => {
          const parent = operation === 'refund' ? await initiate('sale', 10) : await initiate('auth', 10);
          await expectUnchanged(parent.id, async () => {
            const res = await operate(parent.id, operation, body);
            expectError(res, 422, 'ERR_VALIDATION_FAILED');
            expect(res.body.errors, res.text).to.have.property('amount').that.is.an('array').and.not.empty;
          });
        });
      }
    }

    it('JPY: 1.5 on capture, refund and void is 422', async () => {
      const auth = await initiate('auth', 500, 'JPY');
      const sale = await initiate('sale', 500, 'JPY');
      await expectUnchanged(auth.id, async () => {
        for (const [id, operation] of [
          [auth.id, 'capture'],
          [sale.id, 'refund'],
          [auth.id, 'void'],
        ] as [number, Operation][]) {
          const res = await operate(id, operation, { amount: 1.5 });
          expectError(res, 422, 'ERR_VALIDATION_FAILED');
          expect(res.body.errors).to.have.property('amount');
        }
      });
      expect((await status(sale.id)).refunded_amount).to.equal(0);
    });
  });

  describe('X-RateLimit-Remaining', () => {
    it('is on every answer: 200, 400, 401, 403, 404 and 422', async () => {
      const auth = await initiate('auth', 10);
      const seen = new Set<number>();
      const answers = [
        await operate(auth.id, 'capture', { amount: 20 }),
        await operate(auth.id, 'capture', { amount: 1.005 }),
        await operate(auth.id, 'capture', { amount: 10 }, PARTNER_KEY),
        await operate(auth.id, 'capture', { amount: 10 }, null),
        await operate(auth.id, 'capture', { amount: 10 }, OTHER_MERCHANT_KEY),
        await operate(auth.id, 'capture', { amount: 10 }),
      ];
      for (const res of answers) seen.add(res.status);
      expect([...seen].sort()).to.deep.equal([200, 400, 401, 403, 404, 422]);
    });

    it('counts down with each request of the key', async () => {
      const sale = await initiate('sale', 10);
      const a = await call('GET', `/api/v1/transactions/${sale.id}/status`);
      const b = await call('GET', `/api/v1/transactions/${sale.id}/status`);
      expect(Number(b.headers.get('x-ratelimit-remaining'))).to.equal(
        Number(a.headers.get('x-ratelimit-remaining')) - 1,
      );
    });
  });
});
