import { expect } from 'chai';
import { pino } from 'pino';
import { GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';
import { ownAccount } from '../../../src/client/merchant-gateways.js';
import type { GatewayPaymentSession, GatewayTransaction } from '../../../src/client/schemas.js';
import { payByCard } from '../../../src/merchant/checkout/card.js';
import type { CheckoutDeps, CheckoutGateway } from '../../../src/merchant/checkout/deps.js';
import { payByRedirect } from '../../../src/merchant/checkout/redirect.js';
import { chargeSavedCard, type SavedCardDeps } from '../../../src/merchant/checkout/saved.js';
import { applier } from '../../../src/merchant/reconciler/apply.js';
import { DuplicateReference } from '../../../src/merchant/store/orders.js';
import type { SavedCardRecord } from '../../../src/merchant/store/records.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { card } from '../../support/gateway.js';
import { MemoryStore } from '../../support/memory-store.js';

/**
 * Issue 18: checkout's branches through its narrow port, with the real apply path (decide included)
 * on orders in memory and a gateway that answers what each test scripts. What an order may become
 * when the gateway says ERR_DUPLICATE, times out, or cannot be asked: never failed but by the
 * gateway's word that the payment failed.
 */

const NOW = Date.UTC(2026, 10, 24, 12);

type Script = Record<string, (() => unknown)[]>;

/** A gateway whose every call takes the next scripted answer of its method (a function: throw or return). */
function scriptedGateway(script: Script, calls: string[]) {
  const next =
    (method: string) =>
    async (...args: unknown[]) => {
      calls.push(`${method}${typeof args[0] === 'string' ? ` ${args[0]}` : ''}`);
      const answer = script[method]?.shift();
      if (!answer) throw new Error(`unscripted call: ${method}`);
      return { data: answer(), status: 200, replayed: false, remaining: null };
    };
  return Object.fromEntries(
    [
      'verify3ds',
      'createTransaction',
      'transactionStatus',
      'createPaymentSession',
      'getPaymentSession',
      'capture',
      'refund',
      'void',
    ].map((m) => [m, next(m)]),
  ) as unknown as CheckoutGateway;
}

const frictionless = () => ({
  id: 1,
  public_id: 'tds_unit',
  amount: 1234,
  currency: 'EUR',
  status: 'full_auth',
});
const record = (over: Partial<GatewayTransaction> = {}): GatewayTransaction => ({
  id: '100200',
  related_trans_id: null,
  amount: 1234,
  currency: 'EUR',
  status: 'captured',
  transaction_type: 'sale',
  refunded_amount: 0,
  ...over,
});
const session = (over: Partial<GatewayPaymentSession> = {}): GatewayPaymentSession => ({
  payment_session_id: 'ps_unit',
  transaction_id: '100300',
  payment_method: 'psc',
  status: 'pending_redirect',
  amount: 1234,
  currency: 'EUR',
  checkout_url: 'https://gateway.example/hosted/checkout/ps_unit',
  expires_at: new Date(NOW + 15 * 60_000).toISOString(),
  ...over,
});
const throws = (error: Error) => () => {
  throw error;
};
const timeout = () => new GatewayNetworkError('timeout', 'no answer in time', false);
const duplicate = (data: Record<string, unknown>) =>
  new GatewayError(409, 'ERR_DUPLICATE', 'An active transaction already uses this reference.', { data });

function checkout(script: Script) {
  const memory = new MemoryStore(() => NOW);
  const calls: string[] = [];
  const port = memory.port;
  const deps: CheckoutDeps = {
    store: port,
    // One payment at a time is MySQL's (infra/named-locks.ts): here every payment has its turn at once.
    turns: { one: (_orderId, work) => work() },
    apply: applier(port),
    gateways: ownAccount(scriptedGateway(script, calls)),
    box: null as never,
    clock: new ManualClock(NOW),
    logger: pino({ level: 'silent' }),
    publicBaseUrl: 'http://kit.example',
  };
  const order = memory.order();
  const attemptOf = () => memory.attempts.get(memory.orders.get(order.id)!.current_attempt_id!)!;
  return { memory, deps, calls, order, attemptOf, left: () => Object.values(script).flat().length };
}

const sale = { card: card(), mode: 'sale' as const };

describe('merchant: checkout branches (ERR_DUPLICATE adopted, unknown outcomes)', () => {
  it('a timeout, then ERR_DUPLICATE, then the status: the order is paid by the transaction the first call made', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(timeout()), throws(duplicate({ transaction_id: 100200 }))],
      transactionStatus: [() => record()],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(c.calls).to.deep.equal([
      'verify3ds',
      'createTransaction',
      'createTransaction',
      'transactionStatus 100200',
    ]);
    expect(outcome.kind).to.equal('done');
    expect(outcome.order).to.include({ status: 'paid', captured_minor: 1234, needs_review: false });
    // One change carried the ids with the status: the attempt holds the transaction and the 3DS record.
    expect(c.attemptOf()).to.include({ gateway_transaction_id: '100200', verification_id: 'tds_unit' });
    expect(c.memory.history.at(-1)).to.include({ source: 'api', outcome: 'applied', statusAfter: 'paid' });
  });

  it('another payment of the order running for the whole wait: in progress, nothing asked of the gateway, no attempt', async () => {
    const c = checkout({});
    const before = c.memory.orders.get(c.order.id)!;
    const busy = { ...c.deps, turns: { one: async () => 'busy' as const } };
    for (const outcome of [
      await payByCard(busy, c.order.id, sale),
      await payByRedirect(busy, c.order.id, { paymentMethod: 'ideal' }),
    ]) {
      expect(outcome.kind).to.equal('in_progress');
      expect(outcome.order).to.deep.equal(before);
    }
    expect(c.calls).to.deep.equal([]);
    expect(c.memory.attempts.size).to.equal(0);
  });

  it('ERR_DUPLICATE on the first call (the kit died before hearing the last one): an approved auth is adopted', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(duplicate({ transaction_id: '100200' }))],
      transactionStatus: [() => record({ status: 'auth', transaction_type: 'auth' })],
    });
    const outcome = await payByCard(c.deps, c.order.id, { ...sale, mode: 'auth' });
    expect(outcome.kind).to.equal('done');
    expect(outcome.order.status).to.equal('authorized');
    expect(c.attemptOf()).to.include({ gateway_transaction_id: '100200', mode: 'auth' });
  });

  it('a card auth attempt that adopts a sale becomes a sale attempt: the sale captured its whole amount', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(duplicate({ transaction_id: '100200' }))],
      transactionStatus: [() => record()],
    });
    const outcome = await payByCard(c.deps, c.order.id, { ...sale, mode: 'auth' });
    expect(outcome.order).to.include({ status: 'paid', captured_minor: 1234 });
    expect(c.attemptOf().mode).to.equal('sale');
  });

  it('ERR_DUPLICATE naming a live session: the shopper is sent to its page; the attempt becomes that redirect', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(duplicate({ transaction_id: 100300, payment_session_id: 'ps_unit' }))],
      getPaymentSession: [() => session()],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(c.calls.at(-1)).to.equal('getPaymentSession ps_unit');
    expect(outcome).to.include({ kind: 'action', url: 'https://gateway.example/hosted/checkout/ps_unit' });
    expect(outcome.order.status).to.equal('requires_action');
    expect(c.attemptOf()).to.include({
      kind: 'redirect',
      mode: null,
      payment_session_id: 'ps_unit',
      gateway_transaction_id: '100300',
    });
    expect(c.attemptOf().session_expires_at!.getTime()).to.equal(NOW + 15 * 60_000);
    // Watched from now on: the poller asks about the session.
    expect(outcome.order.next_poll_at).to.not.equal(null);
  });

  it('a session past its page (pending at the provider): 409-in-progress, not a page that is gone', async () => {
    const c = checkout({
      createPaymentSession: [throws(duplicate({ transaction_id: 100300, payment_session_id: 'ps_unit' }))],
      getPaymentSession: [() => session({ status: 'pending_provider' })],
    });
    const outcome = await payByRedirect(c.deps, c.order.id, { paymentMethod: 'psc' });
    expect(outcome.kind).to.equal('in_progress');
    expect(outcome.order.status).to.equal('requires_action');
  });

  it('ERR_DUPLICATE naming a transaction still pending: in progress, the order pending and watched, never failed', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(duplicate({ transaction_id: 100300 }))],
      transactionStatus: [() => record({ id: '100300', status: 'pending' })],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(outcome.kind).to.equal('in_progress');
    expect(outcome.order).to.include({ status: 'pending', failure_code: null });
    expect(c.attemptOf().gateway_transaction_id).to.equal('100300');
    expect(outcome.order.next_poll_at).to.not.equal(null);
  });

  it('ERR_DUPLICATE whose status cannot be read: in progress, the order pending, nothing failed', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(duplicate({ transaction_id: 100200 }))],
      transactionStatus: [throws(new GatewayNetworkError('connection', 'refused', true))],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(outcome.kind).to.equal('in_progress');
    expect(outcome.order).to.include({ status: 'pending', failure_code: null });
  });

  it('ERR_DUPLICATE for a payment the gateway failed meanwhile: a decline, by the gateway’s word', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(duplicate({ transaction_id: 100200 }))],
      transactionStatus: [() => record({ status: 'failed', status_reason: 'ERR_CARD_DO_NOT_HONOR' })],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(outcome).to.include({ kind: 'declined', code: 'ERR_CARD_DO_NOT_HONOR' });
    expect(outcome.order.status).to.equal('failed');
  });

  it('two calls with no answer, or two 5xx: outcome unknown, the order pending, not failed', async () => {
    for (const error of [timeout(), new GatewayError(500, 'ERR_UNEXPECTED', 'Unexpected.')]) {
      const c = checkout({
        verify3ds: [frictionless],
        createTransaction: [throws(error), throws(error)],
      });
      const outcome = await payByCard(c.deps, c.order.id, sale);
      expect(outcome.kind, error.message).to.equal('unknown');
      expect(outcome.order).to.include({ status: 'pending', failure_code: null });
      expect(c.calls).to.have.length(3);
    }
  });

  it('nothing sent (connection refused): the attempt fails as unavailable; nothing was charged', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(new GatewayNetworkError('connection', 'refused', true))],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(outcome).to.include({ kind: 'unavailable', code: 'GATEWAY_UNAVAILABLE' });
    expect(c.calls).to.have.length(2);
  });

  it('the gateway slowing the key down (429): unavailable with its code, not a decline', async () => {
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [throws(new GatewayError(429, 'ERR_RATE_LIMITED', 'Too many requests.'))],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(outcome).to.include({ kind: 'unavailable', code: 'ERR_RATE_LIMITED' });
  });

  it('a decline that recorded a failed transaction: declined with its code, by the gateway’s word', async () => {
    const failed = record({ status: 'failed', status_reason: 'ERR_CARD_INSUFFICIENT_FUNDS' });
    const c = checkout({
      verify3ds: [frictionless],
      createTransaction: [
        throws(new GatewayError(400, 'ERR_CARD_INSUFFICIENT_FUNDS', 'Insufficient funds.', { data: failed })),
      ],
    });
    const outcome = await payByCard(c.deps, c.order.id, sale);
    expect(outcome).to.include({ kind: 'declined', code: 'ERR_CARD_INSUFFICIENT_FUNDS' });
    expect(c.attemptOf().gateway_transaction_id).to.equal('100200');
  });

  it('a session whose answer was lost: unknown; the next press is handed the session (ERR_DUPLICATE)', async () => {
    const c = checkout({
      createPaymentSession: [
        throws(timeout()),
        throws(duplicate({ transaction_id: 100300, payment_session_id: 'ps_unit' })),
      ],
      getPaymentSession: [() => session()],
    });
    const first = await payByRedirect(c.deps, c.order.id, { paymentMethod: 'psc' });
    expect(first.kind).to.equal('unknown');
    expect(first.order.status).to.equal('pending');
    const again = await payByRedirect(c.deps, c.order.id, { paymentMethod: 'psc' });
    expect(again).to.include({ kind: 'action', url: session().checkout_url });
    expect(c.left()).to.equal(0);
  });
});

describe('merchant: a charge sent twice with one key (chargeSavedCard)', () => {
  /**
   * A memory store and a gateway that declines, behind turns that let the first to arrive go only
   * once the second is done: the order's maker (the first) waits while a request that found its
   * order pays.
   */
  function makerSecond() {
    const memory = new MemoryStore(() => NOW);
    const calls: string[] = [];
    const declined = record({ status: 'failed', status_reason: 'ERR_CARD_DO_NOT_HONOR' });
    const port = memory.port;
    let arrivals = 0;
    let secondDone!: () => void;
    const second = new Promise<void>((resolve) => (secondDone = resolve));
    const deps: SavedCardDeps = {
      store: {
        ...port,
        orders: {
          ...port.orders,
          create: async (input) => {
            if ([...memory.orders.values()].some((o) => o.reference === input.reference))
              throw new DuplicateReference(`reference ${input.reference} is already used`);
            const order = memory.order({
              reference: input.reference!,
              amount_minor: input.amountMinor,
              currency: input.currency,
            });
            return { order, clientSecret: 'ocs_unit' };
          },
          byReference: async (reference) =>
            [...memory.orders.values()].find((o) => o.reference === reference) ?? null,
        },
        audit: { record: async () => {} },
        savedCards: {
          ...port.savedCards,
          vaultToken: async () => 'tok_unit',
          markRevokedAtGateway: async () => {},
        },
      },
      turns: {
        one: async (_orderId, work) => {
          arrivals += 1;
          if (arrivals === 1) {
            await second;
            return work();
          }
          try {
            return await work();
          } finally {
            secondDone();
          }
        },
      },
      apply: applier(port),
      gateways: ownAccount(
        scriptedGateway(
          {
            createTransaction: [
              throws(new GatewayError(402, 'ERR_CARD_DO_NOT_HONOR', 'Do not honor.', { data: declined })),
            ],
          },
          calls,
        ),
      ),
      box: null as never,
      clock: new ManualClock(NOW),
      logger: pino({ level: 'silent' }),
      publicBaseUrl: 'http://kit.example',
    };
    const charge = {
      customerId: 'cus-unit',
      card: {
        id: 'card_unit',
        customer_id: 'cus-unit',
        brand: 'visa',
        last4: '0341',
        exp_month: 12,
        exp_year: 2030,
        status: 'active',
      } as SavedCardRecord,
      amountMinor: 1234,
      currency: 'EUR',
      mode: 'sale' as const,
      idempotencyKey: 'renewal:2026-12',
      initiatedBy: { name: 'ada', role: 'operator' as const, credential: 'opr_unit' },
    };
    /** The maker, sent first; the finder once the maker waits for its turn. */
    const both = async (finderCharge: typeof charge) => {
      const maker = chargeSavedCard(deps, charge);
      while (arrivals === 0) await new Promise((resolve) => setImmediate(resolve));
      const finder = await chargeSavedCard(deps, finderCharge);
      return { made: await maker, finder };
    };
    return { memory, calls, charge, both };
  }

  it('the request that made the order, given its turn second, answers as the first left it: one call to the gateway', async () => {
    const { memory, calls, charge, both } = makerSecond();
    const { made, finder } = await both(charge);
    expect(calls).to.deep.equal(['createTransaction']);
    expect(finder).to.include({ kind: 'declined', code: 'ERR_CARD_DO_NOT_HONOR', created: false });
    expect(made).to.include({ kind: 'declined', code: 'ERR_CARD_DO_NOT_HONOR', created: true });
    expect(memory.attempts.size).to.equal(1);
  });

  it('the same key with another card at once: the one given the turn second is told the key is used', async () => {
    const { memory, calls, charge, both } = makerSecond();
    const other = { ...charge, card: { ...charge.card, id: 'card_other', last4: '4444' } };
    const { made, finder } = await both(other);
    expect(calls).to.deep.equal(['createTransaction']);
    expect(finder).to.include({ kind: 'declined', created: false });
    expect(made.kind).to.equal('key_reused');
    expect([...memory.attempts.values()].map((a) => a.saved_card_id)).to.deep.equal(['card_other']);
  });
});
