import { GatewayError, GatewayNetworkError } from '../client/errors.js';
import type { SandboxControls } from '../client/sandbox-controls.js';
import type { Config } from '../config.js';
import { orderMerchant } from '../merchant/orders/order-merchant.js';
import type { Store } from '../merchant/store/index.js';
import type { AttemptRecord, OrderRecord } from '../merchant/store/records.js';
import { isCurrencyCode, toMajorNumber } from '../shared/money.js';
import {
  type Parsed,
  parseAmount,
  parseDuration,
  parseOutcome,
  parseWait,
  settleTarget,
} from './trigger-input.js';
import {
  advanceLines,
  type OrderView,
  orderLines,
  outageLines,
  sessionLine,
  tickLines,
  transactionLine,
} from './trigger-lines.js';

/**
 * `npm run cli -- sandbox advance|tick|settle|chargeback|reverse|outage`: the sandbox controls
 * (sandbox.md section 10) by the kit's own order ids, each printing what changed. The gateway's ids
 * come from the kit's database; the order is watched until the webhook has landed.
 */

/** A command refused: its one line, printed on stderr, exit 1. Nothing was changed. */
export class Refused extends Error {
  override name = 'Refused';
}

export interface TriggerDeps {
  config: Config;
  controls: SandboxControls;
  /** Runs `fn` with the kit's store (kit-session.ts: opened for the command, closed after it). */
  withStore: <T>(fn: (store: Store) => Promise<T>) => Promise<T>;
  out: (line: string) => void;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

/** How often the order is read while it is watched for the webhook's change (`--wait`, sandbox.ts). */
const WATCH_EVERY_MS = 200;

export async function advance(d: TriggerDeps, duration: string): Promise<void> {
  const seconds = valid('<duration>', parseDuration(duration));
  await ensureSandbox(d);
  const answer = await control('to move its clock', { seconds: '<duration>' }, () =>
    d.controls.advance(seconds),
  );
  const kitSharesClock = d.config.gateway.baseUrl === null;
  for (const line of advanceLines({ after: answer.now, seconds, machineNow: d.now(), kitSharesClock }))
    d.out(line);
}

export async function tick(d: TriggerDeps): Promise<void> {
  await ensureSandbox(d);
  for (const line of tickLines(await control('to tick', {}, () => d.controls.tick()))) d.out(line);
}

export async function outage(d: TriggerDeps, duration: string, merchant?: string): Promise<void> {
  const seconds = valid('<duration>', parseDuration(duration));
  const merchantId = outageMerchant(d.config.gateway.merchants, merchant);
  await ensureSandbox(d);
  const answer = await control(
    'to start an outage',
    { seconds: '<duration>', merchant_id: '--merchant' },
    () => d.controls.outage(seconds, merchantId),
  );
  for (const line of outageLines({ merchantId: answer.merchant_id, until: answer.until, seconds }))
    d.out(line);
}

export async function settle(
  d: TriggerDeps,
  id: string,
  outcomeText: string,
  waitText: string,
): Promise<void> {
  const outcome = valid('<outcome>', parseOutcome(outcomeText));
  const waitS = valid('--wait', parseWait(waitText));
  await ensureSandbox(d);
  await d.withStore(async (store) => {
    const target = settleTarget(id);
    let order: OrderRecord | null;
    let sessionId: string;
    if (target.kind === 'session') {
      // The gateway's id: settled even when no order of this kit holds it (the sandbox is the judge).
      sessionId = id;
      const attempt = await store.attempts.by('payment_session_id', id);
      order = attempt && (await store.orders.find(attempt.order_id));
    } else {
      const found = await currentAttempt(store, id, 'settle');
      order = found.order;
      if (found.attempt.payment_session_id === null)
        throw new Refused(
          `${id}: the order's current payment is a ${found.attempt.kind} payment with no payment session: only a redirect payment settles`,
        );
      sessionId = found.attempt.payment_session_id;
    }
    const session = await control(`to settle payment session ${sessionId}`, { outcome: '<outcome>' }, () =>
      d.controls.settle(sessionId, outcome),
    );
    d.out(sessionLine(session));
    if (order === null) return d.out(`no order of this kit holds payment session ${sessionId}`);
    await showOrder(d, store, order, waitS, session.finalised_at ?? null);
  });
}

export async function chargeback(
  d: TriggerDeps,
  id: string,
  amountText: string | undefined,
  waitText: string,
): Promise<void> {
  // The amount's form first, before anything is asked; its decimals once the order's currency is known.
  if (amountText !== undefined) valid('--amount', parseAmount(amountText, null));
  const waitS = valid('--wait', parseWait(waitText));
  await ensureSandbox(d);
  await d.withStore(async (store) => {
    const { order, attempt } = await currentAttempt(store, id, 'charge back');
    const transactionId = transactionOf(id, attempt, 'charge back');
    let amount: number | undefined;
    if (amountText !== undefined) {
      if (!isCurrencyCode(order.currency))
        throw new Refused(`--amount: the order's currency ${order.currency} is not one the kit knows`);
      const minor = valid('--amount', parseAmount(amountText, order.currency))!;
      amount = toMajorNumber(minor, order.currency);
    }
    const t = await control(`to charge back transaction ${transactionId}`, { amount: '--amount' }, () =>
      d.controls.chargeback(transactionId, amount),
    );
    d.out(transactionLine(t, 'chargeback'));
    await showOrder(d, store, order, waitS, t.updated_at ?? null);
  });
}

export async function reverse(d: TriggerDeps, id: string, waitText: string): Promise<void> {
  const waitS = valid('--wait', parseWait(waitText));
  await ensureSandbox(d);
  await d.withStore(async (store) => {
    const { order, attempt } = await currentAttempt(store, id, 'reverse');
    const transactionId = transactionOf(id, attempt, 'reverse');
    const t = await control(`to reverse the chargeback of transaction ${transactionId}`, {}, () =>
      d.controls.reverse(transactionId),
    );
    d.out(transactionLine(t, 'reverse'));
    await showOrder(d, store, order, waitS, t.updated_at ?? null);
  });
}

/** A parsed argument's value, or its one line naming it. */
/**
 * Whose deliveries an outage fails (issue 45): the merchant `--merchant` names, required when the kit
 * acts for several; the one it acts for otherwise (a partner key names it); undefined: the key's own.
 */
function outageMerchant(served: readonly number[], named: string | undefined): number | undefined {
  if (named !== undefined && !/^[1-9]\d{0,9}$/.test(named))
    throw new Refused('--merchant: must be a merchant id (an integer)');
  const chosen = orderMerchant(served, named === undefined ? undefined : Number(named));
  if ('problem' in chosen) throw new Refused(`--merchant: ${chosen.problem}`);
  return chosen.merchantId ?? undefined;
}

function valid<T>(name: string, parsed: Parsed<T>): T {
  if (!parsed.ok) throw new Refused(`${name}: ${parsed.message}`);
  return parsed.value;
}

/**
 * The controls exist only in the sandbox: anything else at the gateway's address is refused before
 * a control is sent to it. Without GATEWAY_BASE_URL the address is the running kit's embedded
 * sandbox (GATEWAY_PORT), as for every other command.
 */
async function ensureSandbox(d: TriggerDeps): Promise<void> {
  const probe = await d.controls.probe();
  if (probe.sandbox) return;
  const { baseUrl, sandboxPort } = d.config.gateway;
  throw new Refused(
    baseUrl === null
      ? `GATEWAY_PORT: what answers at http://127.0.0.1:${sandboxPort} is not the sandbox (${probe.why})`
      : `GATEWAY_BASE_URL: ${baseUrl} is not the sandbox (${probe.why}): the sandbox commands work only against the embedded or standalone sandbox`,
  );
}

/**
 * A control's answer, or its refusal as one line: the sandbox's own words (a transaction it does not
 * know, a state that does not allow it, an amount over what is left). No answer at all (connection
 * refused) is left to the CLI's one line for a gateway that does not answer.
 */
async function control<T>(what: string, options: Record<string, string>, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof GatewayError) {
      const answer = `(the sandbox's answer: HTTP ${error.status} ${error.code})`;
      // A field the sandbox names is one the operator gave: named as they wrote it (--amount).
      const [field, messages] = Object.entries(error.details.errors ?? {})[0] ?? [];
      if (field !== undefined)
        throw new Refused(`${options[field] ?? field}: ${messages?.[0] ?? 'is invalid'} ${answer}`);
      throw new Refused(`the sandbox refused ${what}: ${error.message} ${answer}`);
    }
    if (error instanceof GatewayNetworkError && error.kind === 'malformed')
      throw new Refused(`asked ${what}, the gateway did not answer as the sandbox does: ${error.message}`);
    throw error;
  }
}

/** The order and its current payment attempt, or the one line saying which is missing. */
async function currentAttempt(
  store: Store,
  id: string,
  act: string,
): Promise<{ order: OrderRecord; attempt: AttemptRecord }> {
  const order = await store.orders.find(id);
  if (order === null) throw new Refused(`${id}: no order has this id`);
  const attempt =
    order.current_attempt_id === null ? null : await store.attempts.get(order.current_attempt_id);
  if (attempt === null) throw new Refused(`${id}: the order has no payment attempt: nothing to ${act}`);
  return { order, attempt };
}

function transactionOf(id: string, attempt: AttemptRecord, act: string): string {
  if (attempt.gateway_transaction_id === null)
    throw new Refused(
      `${id}: the order's current payment attempt has no gateway transaction (it is ${attempt.status}): nothing to ${act}`,
    );
  return attempt.gateway_transaction_id;
}

const view = (o: OrderRecord): OrderView => ({
  id: o.id,
  status: o.status,
  currency: o.currency,
  disputedMinor: o.disputed_minor,
});

/**
 * Watches the kit's order row until its status moves (the webhook landed and the reconciler applied
 * it), for at most `waitS`. The embedded and standalone sandboxes deliver as soon as an event is
 * recorded (autoDeliver), so no tick is needed, and a tick would run other due work besides.
 */
async function showOrder(
  d: TriggerDeps,
  store: Store,
  before: OrderRecord,
  waitS: number,
  sandboxTime: string | null,
): Promise<void> {
  const deadline = d.now() + waitS * 1000;
  for (;;) {
    const now = await store.orders.find(before.id);
    if (now !== null && now.status !== before.status) {
      for (const line of orderLines({
        before: view(before),
        after: view(now),
        waitedSeconds: waitS,
        sandboxNow: null,
        machineNow: d.now(),
      }))
        d.out(line);
      return;
    }
    if (d.now() >= deadline) break;
    await d.sleep(WATCH_EVERY_MS);
  }
  // Only a kit on its own clock can fall out of step with the sandbox's (trigger-lines.ts aheadLines).
  const sandboxNow =
    sandboxTime === null || d.config.gateway.baseUrl === null ? null : Date.parse(sandboxTime);
  for (const line of orderLines({
    before: view(before),
    after: null,
    waitedSeconds: waitS,
    sandboxNow: sandboxNow !== null && Number.isNaN(sandboxNow) ? null : sandboxNow,
    machineNow: d.now(),
  }))
    d.out(line);
}
