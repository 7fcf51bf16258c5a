import { expect } from 'chai';
import type { Logger } from 'pino';
import { GatewayError, GatewayNetworkError } from '../../../src/client/errors.js';
import type { GatewayClient } from '../../../src/client/gateway-client.js';
import { ownAccount } from '../../../src/client/merchant-gateways.js';
import type { GatewayPaymentSession, GatewayTransaction } from '../../../src/client/schemas.js';
import type { CheckoutDeps } from '../../../src/merchant/checkout/deps.js';
import { refreshOrder } from '../../../src/merchant/checkout/refresh.js';
import {
  isWaiting,
  MAX_REFRESHES,
  REFRESH_SECONDS,
  refreshCount,
  renderLanding,
} from '../../../src/merchant/http/landing.js';
import {
  type AttemptObservation,
  isFinding,
  type Observation,
  type TransactionObservation,
} from '../../../src/merchant/orders/observation.js';
import { ORDER_STATUSES, type OrderStatus } from '../../../src/merchant/orders/status.js';
import type { Apply } from '../../../src/merchant/reconciler/apply.js';
import type { AttemptRecord, OrderRecord, Store } from '../../../src/merchant/store/index.js';
import { ManualClock } from '../../../src/shared/clock.js';

/** issue 8: the landings show human words for every status, reload while waiting, and poll the gateway. */

const order = (status: OrderStatus, extra: Partial<OrderRecord> = {}) =>
  ({
    id: 'ord_unit',
    reference: 'shop-order-42',
    amount_minor: 1234,
    currency: 'EUR',
    status,
    current_attempt_id: 'att_unit',
    ...extra,
  }) as OrderRecord;

const view = { shopUrl: 'https://shop.example/', identity: { payment_session_id: 'ps_unit' }, refreshes: 0 };

/** What a reader sees: the body's text, without tags, the head, or attribute values. */
function visibleText(html: string): string {
  const body = html.slice(html.indexOf('<body>'));
  return body
    .replace(/<[^>]*>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

const headline = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];
const metaRefresh = (html: string) => /<meta http-equiv="refresh" content="([^"]*)">/.exec(html)?.[1];

describe('merchant: the landing page (renderLanding)', () => {
  it('has human words for every order status: a headline and what happens next, never the internal word', () => {
    const headlines = new Set<string>();
    for (const status of ORDER_STATUSES) {
      const { status: code, html } = renderLanding(order(status), view);
      expect(code, status).to.equal(200);
      const text = visibleText(html);
      for (const word of ORDER_STATUSES.filter((s) => s.includes('_')))
        expect(text, `${status}: ${text}`).to.not.contain(word);
      expect(text, status).to.not.match(/status/i);
      const h1 = headline(html);
      expect(h1, status).to.be.a('string');
      expect(h1!.toLowerCase(), status).to.not.equal(status.replace('_', ' '));
      expect(h1!.split(' ').length, `${status}: a sentence, not a word`).to.be.greaterThan(3);
      headlines.add(h1!);
      expect(html, status).to.match(/<p class="next">[^<]{30,}<\/p>/);
      // Machines still read the status, in one place.
      expect(html.match(/data-status="/g), status).to.have.length(1);
      expect(html, status).to.contain(`data-status="${status}"`);
      expect(text, status).to.contain('shop-order-42');
      expect(text, status).to.contain('12.34 EUR');
      expect(text, status).to.contain('Back to the shop');
      expect(html, status).to.not.match(/<script/i);
    }
    expect(headlines.size, 'each status reads differently').to.equal(ORDER_STATUSES.length);
  });

  it('says, for a failed payment, that no money was taken and that the shopper can try again', () => {
    const text = visibleText(renderLanding(order('failed'), view).html);
    expect(text).to.contain('did not go through');
    expect(text).to.contain('No money was taken');
    expect(text).to.contain('try again');
  });

  it('reloads itself only while the payment is being confirmed, keeping only the identifying query', () => {
    for (const status of ORDER_STATUSES) {
      const refresh = metaRefresh(renderLanding(order(status), view).html);
      if (isWaiting(status)) {
        expect(refresh, status).to.equal(`${REFRESH_SECONDS};url=?payment_session_id=ps_unit&amp;n=1`);
      } else {
        expect(refresh, status).to.equal(undefined);
      }
    }
    expect(ORDER_STATUSES.filter(isWaiting)).to.deep.equal(['pending', 'requires_action']);
    const third = renderLanding(order('requires_action'), { ...view, refreshes: 3 }).html;
    expect(metaRefresh(third)).to.equal(`${REFRESH_SECONDS};url=?payment_session_id=ps_unit&amp;n=4`);
  });

  it('stops at the cap and says plainly that it takes longer, that the shopper will be told, and may close the page', () => {
    for (const status of ['pending', 'requires_action'] as const) {
      const { status: code, html } = renderLanding(order(status), { ...view, refreshes: MAX_REFRESHES });
      expect(code).to.equal(200);
      expect(metaRefresh(html), status).to.equal(undefined);
      expect(html).to.contain(`data-status="${status}"`);
      const text = visibleText(html);
      expect(text).to.contain('taking longer than usual');
      expect(text).to.contain('we will tell you by email');
      expect(text).to.contain('close this page');
      // One more look, by hand, without starting the reloads again.
      expect(html).to.contain(`<a href="?payment_session_id=ps_unit&amp;n=${MAX_REFRESHES}">Check again</a>`);
    }
  });

  it('escapes what it did not write: the identifying query, the shop URL, the reference', () => {
    const { html } = renderLanding(order('pending', { reference: '<b>"ref"</b>' }), {
      shopUrl: 'https://shop.example/basket?a=1&b="2"',
      identity: { card_verification_id: 'tds_"><script>x</script>' },
      refreshes: 0,
    });
    expect(html).to.not.contain('<script');
    expect(html).to.not.contain('<b>');
    expect(html).to.contain('&lt;b&gt;&quot;ref&quot;&lt;/b&gt;');
    expect(html).to.contain(
      '<a href="https://shop.example/basket?a=1&amp;b=&quot;2&quot;">Back to the shop</a>',
    );
    const refresh = metaRefresh(html)!;
    const target = new URL(
      refresh.split(';url=')[1]!.replace(/&amp;/g, '&'),
      'http://kit/checkout/3ds-return',
    );
    expect(target.searchParams.get('card_verification_id')).to.equal('tds_"><script>x</script>');
    expect(target.searchParams.get('n')).to.equal('1');
  });

  it('a replaced payment links on to the one that replaced it while that one waits, and does not reload', () => {
    const replaced = { ...view, replaced: true };
    const waiting = renderLanding(order('requires_action'), {
      ...replaced,
      continueUrl: 'https://gw.example/hosted/3ds/tds_new?a=1&b=2',
    }).html;
    expect(headline(waiting)).to.equal('This payment was replaced by a newer one');
    expect(waiting).to.contain(
      '<a id="continue" href="https://gw.example/hosted/3ds/tds_new?a=1&amp;b=2">Continue with the payment you started last</a>',
    );
    expect(metaRefresh(waiting)).to.equal(undefined);
    // The newer payment went through meanwhile (or nothing waits): nothing to continue with.
    for (const continueUrl of [null, undefined]) {
      const html = renderLanding(order('paid'), { ...replaced, continueUrl }).html;
      expect(headline(html)).to.equal('This payment was replaced by a newer one');
      expect(html).to.not.contain('id="continue"');
    }
  });

  it('answers 404 with a human page for an unknown payment: no status, no reload, a way back to the shop', () => {
    const { status, html } = renderLanding(null, view);
    expect(status).to.equal(404);
    expect(html).to.not.contain('data-status');
    expect(metaRefresh(html)).to.equal(undefined);
    expect(visibleText(html)).to.contain('We could not find this payment');
    expect(html).to.contain('<a href="https://shop.example/">Back to the shop</a>');
  });

  it('reads the reload counter from the query: a small number, capped; anything else is 0', () => {
    expect(refreshCount(undefined)).to.equal(0);
    expect(refreshCount('3')).to.equal(3);
    expect(refreshCount('999')).to.equal(MAX_REFRESHES);
    for (const bad of ['', '-1', '1.5', 'x', '1e3', '12345', ['1', '2']])
      expect(refreshCount(bad)).to.equal(0);
  });
});

/** A store, the apply path and a gateway in memory: what refreshOrder asks and applies. */
function fakes(o: OrderRecord, attempt: Partial<AttemptRecord>) {
  let current = o;
  const applied: TransactionObservation[] = [];
  const findings: AttemptObservation[] = [];
  const calls: string[] = [];
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const store = {
    orders: { find: async (id: string) => (id === current.id ? current : null) },
    attempts: {
      get: async (id: string) =>
        id === 'att_unit'
          ? ({
              id,
              order_id: o.id,
              gateway_transaction_id: null,
              payment_session_id: null,
              verification_id: null,
              ...attempt,
            } as AttemptRecord)
          : null,
    },
  };
  const apply = async (obs: Observation) => {
    if (isFinding(obs)) {
      findings.push(obs);
      return { matched: true, orderId: o.id };
    }
    applied.push(obs);
    current = {
      ...current,
      status: obs.transaction.status === 'captured' ? 'paid' : current.status,
    } as OrderRecord;
    return { matched: true, orderId: o.id };
  };
  const session: GatewayPaymentSession = {
    payment_session_id: 'ps_unit',
    transaction_id: '77',
    payment_method: 'ideal',
    status: 'paid',
    amount: 1234,
    currency: 'EUR',
    checkout_url: 'https://gateway.example/hosted/checkout/ps_unit',
  };
  const transaction: GatewayTransaction = {
    id: '77',
    related_trans_id: null,
    amount: 1234,
    currency: 'EUR',
    status: 'captured',
    transaction_type: 'sale',
    refunded_amount: 0,
  };
  let answer: () => Promise<unknown> = async () => undefined;
  const gateway = {
    getPaymentSession: async (id: string, priority: string) => {
      calls.push(`session ${id} ${priority}`);
      await answer();
      return { data: session, status: 200, replayed: false, remaining: null };
    },
    transactionStatus: async (id: string, priority: string) => {
      calls.push(`status ${id} ${priority}`);
      await answer();
      return { data: transaction, status: 200, replayed: false, remaining: null };
    },
  };
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }),
  };
  const deps = {
    store: store as unknown as Store,
    apply: apply as Apply,
    gateways: ownAccount(gateway as unknown as GatewayClient),
    logger: logger as unknown as Logger,
    clock: new ManualClock(Date.UTC(2026, 10, 1, 12)),
    publicBaseUrl: 'http://kit.example',
  } as Partial<CheckoutDeps> as CheckoutDeps;
  return {
    deps,
    applied,
    findings,
    calls,
    warnings,
    answerWith: (f: () => Promise<unknown>) => {
      answer = f;
    },
  };
}

describe('merchant: refreshOrder (a poll of the current attempt, through the one apply path)', () => {
  it('asks for a redirect attempt’s session and applies the answer as a poll observation', async () => {
    const f = fakes(order('requires_action'), {
      payment_session_id: 'ps_unit',
      gateway_transaction_id: '77',
    });
    const after = await refreshOrder(f.deps, 'ord_unit');
    expect(f.calls).to.deep.equal(['session ps_unit landing']);
    expect(f.applied).to.have.length(1);
    const obs = f.applied[0]!;
    expect(obs.source).to.equal('poll');
    expect(obs.sourceId).to.equal(`poll:att_unit:${Date.UTC(2026, 10, 1, 12)}`);
    expect(obs.sourceId.length).to.be.at.most(128);
    expect(obs.sessionStatus).to.equal('paid');
    expect(obs.transaction).to.include({ id: '77', status: 'captured' });
    expect(after!.status).to.equal('paid');
  });

  it('asks for a card attempt’s transaction status, as the caller it is given', async () => {
    const f = fakes(order('pending'), { gateway_transaction_id: '77' });
    await refreshOrder(f.deps, 'ord_unit', { caller: 'poller' });
    expect(f.calls).to.deep.equal(['status 77 poller']);
    expect(f.applied[0]!.source).to.equal('poll');
    expect(f.applied[0]!.transaction.type).to.equal('sale');
  });

  it('asks nothing when there is nothing to ask: a final order, an open 3DS challenge, no attempt', async () => {
    for (const [o, attempt] of [
      [order('paid'), { payment_session_id: 'ps_unit', gateway_transaction_id: '77' }],
      [order('failed'), { gateway_transaction_id: '77' }],
      [order('requires_action'), { verification_id: 'tds_unit' }],
      [order('pending', { current_attempt_id: null }), {}],
    ] as const) {
      const f = fakes(o, attempt);
      expect(await refreshOrder(f.deps, 'ord_unit')).to.equal(o);
      expect(f.calls, o.status).to.deep.equal([]);
      expect(f.applied).to.deep.equal([]);
    }
    const none = fakes(order('pending'), {});
    expect(await refreshOrder(none.deps, 'ord_missing')).to.equal(null);
  });

  it('a gateway error is a warning with the order id, and the answer is the order as stored', async () => {
    for (const error of [
      new GatewayError(503, 'ERR_UNEXPECTED', 'Try again.'),
      new GatewayNetworkError('timeout', 'GET /api/v1/payment-sessions/ps_unit: no answer in time', false),
    ]) {
      const f = fakes(order('requires_action'), {
        payment_session_id: 'ps_unit',
        gateway_transaction_id: '77',
      });
      f.answerWith(async () => {
        throw error;
      });
      const after = await refreshOrder(f.deps, 'ord_unit');
      expect(after!.status).to.equal('requires_action');
      expect(f.applied).to.deep.equal([]);
      expect(f.findings).to.deep.equal([]);
      expect(f.warnings).to.have.length(1);
      expect(f.warnings[0]!.fields).to.include({ order: 'ord_unit', attempt: 'att_unit' });
    }
  });

  it('a gateway that does not know the session flags the order, as the poller does (one question for both)', async () => {
    const f = fakes(order('requires_action'), {
      payment_session_id: 'ps_unit',
      gateway_transaction_id: '77',
    });
    f.answerWith(async () => {
      throw new GatewayError(404, 'ERR_NOT_FOUND', 'Payment session not found.');
    });
    const after = await refreshOrder(f.deps, 'ord_unit');
    expect(after!.status).to.equal('requires_action');
    expect(f.applied).to.deep.equal([]);
    expect(f.findings).to.have.length(1);
    expect(f.findings[0]!.finding).to.deep.equal({
      review: 'the gateway does not know payment session ps_unit',
    });
    expect(f.findings[0]!.about).to.include({ orderId: 'ord_unit', attemptId: 'att_unit' });
    expect(f.findings[0]!.source).to.equal('poll');
    expect(f.warnings).to.have.length(1);
  });

  it('stops waiting when the caller’s signal aborts; an answer that comes later is still applied', async () => {
    const f = fakes(order('requires_action'), {
      payment_session_id: 'ps_unit',
      gateway_transaction_id: '77',
    });
    let release!: () => void;
    f.answerWith(() => new Promise<void>((resolve) => (release = resolve)));
    const stop = new AbortController();
    const pending = refreshOrder(f.deps, 'ord_unit', { signal: stop.signal });
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    const after = await pending;
    expect(after!.status).to.equal('requires_action');
    expect(f.warnings[0]!.fields).to.include({ order: 'ord_unit' });
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(f.applied).to.have.length(1);
  });

  it('an error that is not the gateway’s (the database) is not hidden', async () => {
    const f = fakes(order('requires_action'), {
      payment_session_id: 'ps_unit',
      gateway_transaction_id: '77',
    });
    f.deps.apply = async () => {
      throw new Error('database gone');
    };
    let thrown: unknown;
    await refreshOrder(f.deps, 'ord_unit').catch((e) => (thrown = e));
    expect((thrown as Error)?.message).to.equal('database gone');
  });
});
