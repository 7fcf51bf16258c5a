import { expect } from 'chai';
import {
  advance,
  chargeback,
  Refused,
  reverse,
  settle,
  type TriggerDeps,
} from '../../../src/cli/sandbox-triggers.js';
import { GatewayError } from '../../../src/client/errors.js';
import type { SandboxControls } from '../../../src/client/sandbox-controls.js';
import type { Config } from '../../../src/config.js';
import type { Store } from '../../../src/merchant/store/index.js';

/**
 * The sandbox triggers' command logic over fakes of the controls, the store and time: the order of
 * things (arguments, then the sandbox, then the database, then the control, then the order watched)
 * and what each prints.
 */
describe('CLI: the sandbox triggers’ commands', () => {
  let calls: string[];
  let out: string[];
  let clock: number;
  let orderReads: number;
  /** The order's status on each read: the last one repeats. */
  let statuses: string[];

  const order = (status: string) => ({
    id: 'ord_1',
    status,
    currency: 'EUR',
    disputed_minor: status === 'disputed' ? 1234 : 0,
    current_attempt_id: 'att_1',
  });
  const attempt = {
    id: 'att_1',
    order_id: 'ord_1',
    kind: 'card',
    status: 'paid',
    gateway_transaction_id: '100000',
    payment_session_id: null,
  };
  const store = {
    orders: {
      find: async (id: string) => {
        if (id !== 'ord_1') return null;
        const status = statuses[Math.min(orderReads, statuses.length - 1)]!;
        orderReads += 1;
        return order(status);
      },
    },
    attempts: {
      get: async (id: string) => (id === 'att_1' ? attempt : null),
      by: async () => null,
    },
  } as unknown as Store;

  const deps = (o: { sandbox?: boolean; baseUrl?: string | null; fail?: GatewayError } = {}): TriggerDeps => {
    const act =
      <T>(name: string, answer: T) =>
      async () => {
        calls.push(name);
        if (o.fail) throw o.fail;
        return answer;
      };
    const controls = {
      probe: async () => {
        calls.push('probe');
        return o.sandbox === false
          ? { sandbox: false, why: 'GET /openapi.json answers HTTP 404' }
          : { sandbox: true };
      },
      advance: act('advance', { now: new Date(clock + 7200_000).toISOString() }),
      chargeback: act('chargeback', {
        id: '100000',
        status: 'chargeback',
        currency: 'EUR',
        chargeback_amount: 1234,
      }),
      reverse: act('reverse', { id: '100000', status: 'captured', currency: 'EUR', chargeback_amount: 0 }),
      settle: act('settle', { payment_session_id: 'ps_x', status: 'paid', transaction_id: '100001' }),
    } as unknown as SandboxControls;
    return {
      config: { gateway: { baseUrl: o.baseUrl ?? null, sandboxPort: 4010 } } as unknown as Config,
      controls,
      withStore: async (fn) => {
        calls.push('store');
        return fn(store);
      },
      out: (line) => void out.push(line),
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    };
  };
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => (e instanceof Refused ? e.message : e),
    );

  beforeEach(() => {
    calls = [];
    out = [];
    clock = Date.UTC(2026, 10, 25, 2, 0, 0);
    orderReads = 0;
    statuses = ['paid'];
  });

  it('not the sandbox: one line naming GATEWAY_BASE_URL, and no control is sent', async () => {
    const line = await refusal(advance(deps({ sandbox: false, baseUrl: 'https://gateway.example' }), '2h'));
    expect(line).to.equal(
      'GATEWAY_BASE_URL: https://gateway.example is not the sandbox (GET /openapi.json answers HTTP 404): the sandbox commands work only against the embedded or standalone sandbox',
    );
    expect(calls).to.deep.equal(['probe']);
    const embedded = await refusal(chargeback(deps({ sandbox: false }), 'ord_1', undefined, '5'));
    expect(embedded).to.equal(
      'GATEWAY_PORT: what answers at http://127.0.0.1:4010 is not the sandbox (GET /openapi.json answers HTTP 404)',
    );
    expect(calls).to.deep.equal(['probe', 'probe']);
  });

  it('a bad argument is refused before the sandbox is even asked', async () => {
    expect(await refusal(advance(deps(), '2 hours'))).to.match(/^<duration>: must be a duration/);
    expect(await refusal(chargeback(deps(), 'ord_1', '5,00', '5'))).to.match(
      /^--amount: must be a positive amount/,
    );
    expect(await refusal(settle(deps(), 'ord_1', 'done', '5'))).to.match(/^<outcome>: must be paid/);
    expect(await refusal(reverse(deps(), 'ord_1', 'x'))).to.match(/^--wait: /);
    expect(calls).to.deep.equal([]);
  });

  it('the amount’s decimals against the order’s currency, before the control', async () => {
    expect(await refusal(chargeback(deps(), 'ord_1', '5.001', '5'))).to.equal(
      '--amount: must have at most 2 decimal places for EUR, the order\'s currency (got "5.001")',
    );
    expect(calls).to.deep.equal(['probe', 'store']);
  });

  it('advance: the clock before -> after', async () => {
    await advance(deps(), '2h');
    expect(calls).to.deep.equal(['probe', 'advance']);
    expect(out[0]).to.equal('sandbox clock: 2026-11-25 02:00:00 UTC -> 2026-11-25 04:00:00 UTC (+2h)');
  });

  it('chargeback: the gateway’s answer, then the order once its status moves', async () => {
    statuses = ['paid', 'paid', 'paid', 'disputed'];
    await chargeback(deps(), 'ord_1', undefined, '5');
    expect(calls).to.deep.equal(['probe', 'store', 'chargeback']);
    expect(out).to.deep.equal([
      'gateway: transaction 100000 chargeback (12.34 EUR charged back)',
      'order ord_1: paid -> disputed (12.34 EUR disputed)',
    ]);
    expect(orderReads).to.equal(4);
  });

  it('the order not moved within --wait: says so, and exits well', async () => {
    const started = clock;
    await reverse(deps(), 'ord_1', '2');
    expect(out).to.deep.equal([
      'gateway: transaction 100000 captured (chargeback reversed)',
      "order ord_1: still paid after 2 s; the kit applies the change when the gateway's event arrives (a webhook or its retry, or the recovery job)",
    ]);
    expect(clock - started).to.be.within(2000, 2200);
  });

  it('no such order, or no payment of the kind the control needs: one line, no control', async () => {
    expect(await refusal(chargeback(deps(), 'ord_nope', undefined, '5'))).to.equal(
      'ord_nope: no order has this id',
    );
    expect(await refusal(settle(deps(), 'ord_1', 'paid', '5'))).to.equal(
      "ord_1: the order's current payment is a card payment with no payment session: only a redirect payment settles",
    );
    expect(calls).to.not.include('chargeback').and.not.include('settle');
  });

  it('a session id the kit does not hold is settled all the same, and said so', async () => {
    await settle(deps(), 'ps_x', 'paid', '5');
    expect(out).to.deep.equal([
      'gateway: payment session ps_x paid (transaction 100001)',
      'no order of this kit holds payment session ps_x',
    ]);
  });

  it("the sandbox's refusal: one line in its words; a field it names is the option the operator gave", async () => {
    const over = new GatewayError(422, 'ERR_VALIDATION_FAILED', 'The given data was invalid.', {
      errors: { amount: ['must be at most 12.34 EUR, what was captured and not refunded'] },
    });
    expect(await refusal(chargeback(deps({ fail: over }), 'ord_1', '99', '5'))).to.equal(
      "--amount: must be at most 12.34 EUR, what was captured and not refunded (the sandbox's answer: HTTP 422 ERR_VALIDATION_FAILED)",
    );
    const gone = new GatewayError(404, 'ERR_NOT_FOUND', 'Transaction not found.');
    expect(await refusal(reverse(deps({ fail: gone }), 'ord_1', '5'))).to.equal(
      "the sandbox refused to reverse the chargeback of transaction 100000: Transaction not found. (the sandbox's answer: HTTP 404 ERR_NOT_FOUND)",
    );
  });
});
