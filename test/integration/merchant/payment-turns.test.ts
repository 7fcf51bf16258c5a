import { expect } from 'chai';
import mysql from 'mysql2/promise';
import { createLockPool } from '../../../src/infra/database.js';
import { BUSY, LOCK_IDLE_SECONDS, NamedLocks } from '../../../src/infra/named-locks.js';
import { count, rows, someoneWaitsForALock } from '../../support/db.js';
import { card } from '../../support/gateway.js';
import { pressButton, startSiblingKit, startTestKit, type TestKit } from '../../support/kit.js';

/**
 * One payment of an order at a time (checkout/deps.ts PaymentTurns, infra/named-locks.ts). A shopper
 * who presses Pay three times, or a job that retries a charge while the first is still at the
 * gateway, used to start three attempts at once: the gateway took the money once (the reference),
 * but the first attempt's answer landed on an attempt the others had superseded, and the order was
 * flagged for a double charge that never happened. Now the second waits for the first and finds its
 * outcome; a process that dies mid-payment lets the next one in at once.
 */
/** The sandbox's card that asks for a 3DS challenge. */
const CHALLENGE_CARD = '4000000000003220';
/** Approved and saved; every later payment with it declined (ERR_CARD_DO_NOT_HONOR). */
const SAVED_THEN_DECLINED = '4000000000000341';

describe('merchant: one payment of an order at a time', function () {
  this.timeout(60_000);
  let t: TestKit;
  let admin: mysql.Connection;
  let lockPool: mysql.Pool;
  let locks: NamedLocks;

  before(async () => {
    t = await startTestKit({ env: { ROLES: 'api' }, paymentWaitMs: 1_500 });
    admin = await mysql.createConnection({ host: '127.0.0.1', user: 'root', database: t.database });
    lockPool = createLockPool(`mysql://root@127.0.0.1:3306/${t.database}`);
    locks = new NamedLocks(lockPool, t.database);
  });
  after(async () => {
    await admin?.end();
    await lockPool?.end();
    await t?.close();
  });

  const newOrder = async (body: Record<string, unknown> = {}) => {
    const created = await t.call('POST', '/orders', { body: { amount: '21.00', currency: 'EUR', ...body } });
    expect(created.status, created.text).to.equal(201);
    return created.body.data.order as { id: string; reference: string };
  };
  const payCard = (id: string) =>
    t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
  // biome-ignore lint/suspicious/noExplicitAny: the answers' bodies, as JSON
  const summary = (r: { status: number; body: any }) => [r.status, r.body.code || r.body.data?.order?.status];
  /** The order's record as finance sees it: its attempts, whether it is flagged, its history's start lines. */
  const records = async (id: string) => ({
    attempts: await count(t, 'payment_attempts', { order_id: id }),
    order: (await rows(t, 'orders', { id }))[0]!,
    started: (await rows(t, 'order_history', { order_id: id })).filter((h) =>
      /attempt started/.test(String(h.detail)),
    ).length,
  });

  /** A card saved for a new customer (its first payment approved), then three charges of it at once with one key. */
  const chargedThreeTimesAtOnce = async (customer: string, saving: ReturnType<typeof card>, key: string) => {
    const saved = await newOrder({ customer: { merchant_customer_id: customer } });
    const vouched = await t.call('POST', `/customers/${customer}/tokens`, { ops: true });
    const first = await t.call('POST', `/orders/${saved.id}/pay/card`, {
      body: { card: saving, mode: 'sale', save_card: true },
      headers: { 'customer-token': vouched.body.data.customer_token },
    });
    expect(first.status, first.text).to.equal(200);
    const [cardRow] = await rows(t, 'saved_cards', { customer_id: customer });
    const charge = () =>
      t.call('POST', `/customers/${customer}/charges`, {
        ops: true,
        body: { card: cardRow!.id, amount: '5.00', currency: 'EUR' },
        headers: { 'idempotency-key': key },
      });
    return Promise.all([charge(), charge(), charge()]);
  };

  it('Pay pressed three times at once: one attempt, one charge, no review; one answer paid, the others told it is', async () => {
    const { id } = await newOrder();
    const answers = await Promise.all([payCard(id), payCard(id), payCard(id)]);
    expect(answers.map(summary).sort()).to.deep.equal([
      [200, 'paid'],
      [409, 'INVALID_STATE'],
      [409, 'INVALID_STATE'],
    ]);
    // The presses told it is paid are shown the order too: a storefront showing either answer shows it paid.
    for (const refused of answers.filter((a) => a.status === 409))
      expect(refused.body.data)
        .to.deep.include({ status: 'paid' })
        .and.nested.include({ 'order.status': 'paid' });
    const r = await records(id);
    expect(r.attempts).to.equal(1);
    expect(r.started).to.equal(1);
    expect(r.order).to.include({
      status: 'paid',
      captured_minor: 2100,
      needs_review: 0,
      review_reason: null,
    });
  });

  it('a charge sent three times at once with one key: one order, one attempt, no review; every answer is the order paid', async () => {
    const answers = await chargedThreeTimesAtOnce('cus-turns', card(), 'renewal:2026-11');
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 200, 201]);
    const orderIds = new Set(answers.map((a) => a.body.data.order.id as string));
    expect(orderIds.size).to.equal(1);
    expect(answers.map((a) => a.body.data.order.status)).to.deep.equal(['paid', 'paid', 'paid']);
    const r = await records([...orderIds][0]!);
    expect(r.attempts).to.equal(1);
    expect(r.order).to.include({ status: 'paid', needs_review: 0 });
  });

  it('a declined charge sent three times at once with one key: one attempt, and every answer the same decline', async () => {
    const answers = await chargedThreeTimesAtOnce(
      'cus-turns-declined',
      card(SAVED_THEN_DECLINED),
      'renewal:2026-12',
    );
    expect(answers.map((a) => [a.status, a.body.code])).to.deep.equal([
      [402, 'ERR_CARD_DO_NOT_HONOR'],
      [402, 'ERR_CARD_DO_NOT_HONOR'],
      [402, 'ERR_CARD_DO_NOT_HONOR'],
    ]);
    const orderId = answers[0]!.body.data.order.id as string;
    expect(new Set(answers.map((a) => a.body.data.order.id))).to.deep.equal(new Set([orderId]));
    const r = await records(orderId);
    expect(r.attempts, 'charged once: the same key again answers the decline').to.equal(1);
    expect(r.order).to.include({ status: 'failed', needs_review: 0 });
  });

  it('the 3DS return and Pay pressed in another tab at once: one charge, no review', async () => {
    const { id, reference } = await newOrder();
    const opened = await t.call('POST', `/orders/${id}/pay/card`, {
      body: { card: card(CHALLENGE_CARD), mode: 'sale' },
    });
    expect(opened.body.data?.order?.status, opened.text).to.equal('requires_action');
    const back = await pressButton(opened.body.data.next_action.url, 'authenticate');
    const [landing, pressed] = await Promise.all([fetch(back), payCard(id)]);
    expect(landing.status).to.equal(200);
    // Whichever came first paid; the other found it paid, or adopted the same payment.
    expect([200, 409]).to.include(pressed.status);
    const r = await records(id);
    expect(r.order).to.include({ status: 'paid', needs_review: 0, review_reason: null });
    const charged = [...t.kit.sandbox!.deps.state.transactions.values()].filter(
      (x) => x.reference === reference && x.status === 'captured',
    );
    expect(charged).to.have.length(1);
  });

  it('another payment of the order holding on past the wait: 409 PAYMENT_IN_PROGRESS, nothing started; then it goes', async () => {
    const { id } = await newOrder();
    let end!: () => void;
    const held = locks.holding(`pay:${id}`, 1_000, () => new Promise<void>((resolve) => (end = resolve)));
    await waitFor(() => end !== undefined);
    const refused = await payCard(id);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.code).to.equal('PAYMENT_IN_PROGRESS');
    expect(refused.headers.get('retry-after')).to.equal('5');
    expect(await count(t, 'payment_attempts', { order_id: id })).to.equal(0);
    end();
    await held;
    expect(summary(await payCard(id))).to.deep.equal([200, 'paid']);
  });

  it('a process that dies holding its turn lets the waiting payment in at once, not after the wait', async () => {
    const { id } = await newOrder();
    const name = locks.serverName(`pay:${id}`);
    // A payment in a process about to die: its lock held, its work never ending.
    const dying = locks.holding(`pay:${id}`, 1_000, () => new Promise<void>(() => {}));
    await waitFor(async () => (await isUsed(name)) !== null);
    // Another api process, with the default wait (20 s): the test ends long before it would.
    const slow = await startSiblingKit(t, 'api');
    try {
      const paying = payCardOn(slow, id);
      await someoneWaitsForALock(admin);
      // The server ends the lock with its connection, as when the process holding it is killed.
      await admin.query(`KILL ${await isUsed(name)}`);
      const answer = await paying;
      expect([answer.status, answer.body.data?.order?.status]).to.deep.equal([200, 'paid']);
      void dying.catch(() => {});
    } finally {
      await slow.close();
    }
  });

  it('the lock is named for the database: two databases on one server never wait for each other', async () => {
    const other = new NamedLocks(lockPool, `${t.database}_copy`);
    expect(other.serverName('pay:ord_1')).to.not.equal(locks.serverName('pay:ord_1'));
    let end!: () => void;
    const held = locks.holding('pay:ord_1', 500, () => new Promise<void>((resolve) => (end = resolve)));
    await waitFor(() => end !== undefined);
    expect(await other.holding('pay:ord_1', 500, async () => 'ran')).to.equal('ran');
    expect(await locks.holding('pay:ord_1', 200, async () => 'ran')).to.equal(BUSY);
    end();
    await held;
    expect(await locks.holding('pay:ord_1', 200, async () => 'ran')).to.equal('ran');
  });

  it('a lock connection is cut off after LOCK_IDLE_SECONDS of silence, not the server default of 8 hours', async () => {
    // A pool of one: the connection that held the lock is the one handed out next.
    const one = mysql.createPool({ uri: `mysql://root@127.0.0.1:3306/${t.database}`, connectionLimit: 1 });
    try {
      const variable = async (c: mysql.PoolConnection) => {
        const [found] = await c.query<mysql.RowDataPacket[]>('SELECT @@session.wait_timeout AS s');
        return Number(found[0]!.s);
      };
      const before = await one.getConnection();
      expect(await variable(before)).to.not.equal(LOCK_IDLE_SECONDS);
      before.release();
      const inside = new NamedLocks(one, t.database);
      expect(await inside.holding('pay:ord_idle', 500, async () => 'ran')).to.equal('ran');
      const after = await one.getConnection();
      expect(after.threadId).to.equal(before.threadId);
      expect(await variable(after)).to.equal(LOCK_IDLE_SECONDS);
      after.release();
    } finally {
      await one.end();
    }
  });

  async function isUsed(name: string): Promise<number | null> {
    const [found] = await admin.query<mysql.RowDataPacket[]>('SELECT IS_USED_LOCK(?) AS holder', [name]);
    return found[0]!.holder === null ? null : Number(found[0]!.holder);
  }

  async function payCardOn(kit: { url: string | null }, id: string) {
    const res = await fetch(`${kit.url}/orders/${id}/pay/card`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'order-secret': t.secrets.get(id)! },
      body: JSON.stringify({ card: card(), mode: 'sale' }),
    });
    return { status: res.status, body: (await res.json()) as { data?: { order?: { status: string } } } };
  }
});

async function waitFor(ok: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error('waited in vain');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
