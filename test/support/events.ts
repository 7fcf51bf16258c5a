import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Transaction } from '../../src/gateway/domain/transactions.js';
import { eventIdsOf, type ObservationJob } from '../../src/merchant/reconciler/queue.js';
import { type Clock, isoMicros, unixSeconds } from '../../src/shared/clock.js';
import { sign } from '../../src/shared/signature.js';
import { row, rows } from './db.js';
import { card, jsonOf, MERCHANT_KEY } from './gateway.js';
import { getOrder, type TestKit } from './kit.js';
import { waitFor } from './process.js';

/**
 * Gateway events crafted by a test against a TestKit: payloads shaped as gateway-api.md's webhook
 * payload, built from the embedded sandbox's own records, signed with the secret the kit holds and
 * posted to POST /webhooks/gateway; then waits for the inbox to process them.
 */

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const alnum = (n: number) => [...randomBytes(n)].map((b) => ALNUM[b % ALNUM.length]).join('');
/** sandbox.md section 3: `evt_` and 24 characters of [A-Za-z0-9]. */
const newEventId = () => `evt_${alnum(24)}`;

/** `data.transaction` as gateway-api.md's webhook payload carries it, from a sandbox record. */
export function wire(tx: Transaction): Record<string, unknown> {
  return {
    id: tx.id,
    merchant_trans_id: tx.reference,
    related_trans_id: tx.relatedId,
    transaction_type: tx.type,
    status: tx.status,
    amount: tx.amount,
    currency: tx.currency,
    acquirer_provider: 'sandbox-acquirer',
    acquirer_trans_id: tx.acquirerTransId,
    acquirer_auth_code: tx.acquirerAuthCode,
    description: tx.description,
    created_at: isoMicros(tx.createdAt),
    updated_at: isoMicros(tx.updatedAt),
    refunded_amount: tx.refundedAmount,
  };
}

export interface Event {
  id: string;
  body: string;
}

export function event(type: string, transaction: Record<string, unknown>, id = newEventId()): Event {
  const payload = {
    id,
    type,
    created_at: isoMicros(Date.now()),
    api_version: '2026-11-01',
    data: { transaction },
  };
  return { id, body: JSON.stringify(payload) };
}

/** The API of the kit's embedded sandbox, with the merchant's key. */
export async function sandboxCall(
  t: TestKit,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(t.kit.gatewayUrl + path, {
    method,
    headers: { authorization: `Bearer ${MERCHANT_KEY}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: envelopes of every shape
  return { status: res.status, body: (await res.json()) as any };
}

/** sandbox.md section 10: every delivery of the merchant fails for a day of sandbox clock. */
export async function deliveriesOff(t: TestKit) {
  const outage = await sandboxCall(t, 'POST', '/sandbox/webhook/outage', { seconds: 86400 });
  expect(outage.status).to.equal(200);
}

export const stateOf = (t: TestKit) => t.kit.sandbox!.deps.state;

/** POST /orders, which must answer 201: the new order's id. */
export async function newOrder(t: TestKit, amount = '12.34', currency = 'EUR') {
  const created = await t.call('POST', '/orders', { body: { amount, currency } });
  expect(created.status, created.text).to.equal(201);
  return created.body.data.order.id as string;
}

/** A card sale through the kit (paid by the API answer); the sale record as it was when captured. */
export async function paidOrder(t: TestKit, amount = '12.34') {
  const id = await newOrder(t, amount);
  const pay = await t.call('POST', `/orders/${id}/pay/card`, { body: { card: card(), mode: 'sale' } });
  expect(pay.status, pay.text).to.equal(200);
  expect(pay.body.data.order.status).to.equal('paid');
  // The payment's answer is the public view: the operator's shows the transaction.
  const saleId = Number((await getOrder(t, id)).payment.gateway_transaction_id);
  const sale = { ...stateOf(t).transactions.get(saleId)! };
  expect(sale.type).to.equal('sale');
  return { id, sale };
}

/** A refund made at the gateway directly; returns the refund record. */
export async function refundAtGateway(
  t: TestKit,
  transactionId: number,
  amount: number,
): Promise<Transaction> {
  const answer = await sandboxCall(
    t,
    'POST',
    `/api/v1/transactions/${transactionId}/refund`,
    { amount, reason: 'requested by customer' },
    { 'Idempotency-Key': `idem-${alnum(16)}` },
  );
  expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
  return { ...stateOf(t).transactions.get(Number(answer.body.data.transaction.id))! };
}

/** The signing secret the kit stored at start-up (it fetched it from the gateway). */
export async function storedSecret(t: TestKit): Promise<string> {
  const [secret] = await t.kit.store.secrets.active();
  expect(secret, 'the kit stored a signing secret').to.be.a('string');
  return secret!;
}

export interface Delivery {
  secret?: string;
  /** Unix seconds of the signature; default: the clock's now. */
  at?: number;
  /** The whole header instead of a signature; null: no header at all. */
  header?: string | null;
  replay?: boolean;
}

/** A function that POSTs a body to the kit's /webhooks/gateway, signed (by default) at `clock`'s now. */
export function poster(t: TestKit, clock: Clock = t.clock) {
  /** `body`: the JSON text, or bytes as they are (any encoding). */
  return async (body: string | Buffer, o: Delivery = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (o.header !== null)
      headers['X-Service-Signature'] = o.header ?? sign(body, o.secret!, o.at ?? unixSeconds(clock.now()));
    if (o.replay) headers['X-Service-Replay'] = 'true';
    const started = performance.now();
    const res = await fetch(`${t.url}/webhooks/gateway`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    // biome-ignore lint/suspicious/noExplicitAny: envelopes of every shape
    return { status: res.status, headers: res.headers, body: jsonOf(text) as any, text, ms };
  };
}

/** POSTs a body to the kit's /webhooks/gateway, signed with `secret` now. */
export const post = (t: TestKit, body: string, secret: string) => poster(t)(body, { secret });

/** Records every job the kit asks bull to queue (the kit's enqueue ends in queue.addBulk; jobs use queue.add). */
export function spyOnQueue(t: TestKit) {
  const queued: string[] = [];
  /** Whether each call has settled yet (resolved or rejected). */
  const settled: boolean[] = [];
  type Add = (...args: unknown[]) => Promise<unknown>;
  const queue = t.kit.queue as unknown as { add: Add; addBulk: Add };
  const originals = { add: queue.add, addBulk: queue.addBulk };
  // A job carries one event or a batch's (reconciler/queue.ts).
  const isJob = (a: unknown) => typeof a === 'object' && a !== null && ('eventId' in a || 'eventIds' in a);
  const eventIdsOfData = (data: unknown) => (isJob(data) ? eventIdsOf(data as ObservationJob) : ['?']);
  const spy = (name: 'add' | 'addBulk', ids: (args: unknown[]) => string[]) =>
    function (this: unknown, ...args: unknown[]) {
      queued.push(...ids(args));
      const index = settled.push(false) - 1;
      const result = originals[name].apply(this, args);
      const done = () => {
        settled[index] = true;
      };
      result.then(done, done);
      return result;
    };
  queue.add = spy('add', (args) => eventIdsOfData(args.find(isJob)));
  queue.addBulk = spy('addBulk', (args) =>
    (args[0] as { data: unknown }[]).flatMap((job) => eventIdsOfData(job.data)),
  );
  return {
    queued,
    settled,
    restore: () => {
      Object.assign(queue, originals);
    },
  };
}

export const inboxRow = (t: TestKit, id: string) => row(t, 'webhook_inbox', { event_id: id });

/** Waits until the inbox row of event `id` is processed; returns the row. */
export const processed = (t: TestKit, id: string) =>
  waitFor(`inbox row ${id} processed`, async () => {
    const row = await inboxRow(t, id);
    return row?.processed_at ? row : null;
  });

/** Waits until every event the embedded sandbox recorded for `reference` is stored and processed by the kit. */
export async function referenceSettled(t: TestKit, reference: string, withinMs = 10_000): Promise<void> {
  const ids = () =>
    [...stateOf(t).webhooks.events.values()].filter((e) => e.reference === reference).map((e) => e.id);
  await waitFor(
    'the gateway events processed',
    async () => {
      const want = ids();
      const done = await rows(t, 'webhook_inbox', { event_id: want });
      return want.length > 0 && done.length === want.length && done.every((r) => r.processed_at);
    },
    withinMs,
  );
}
