import type { TestKit } from './kit.js';
import { truthOfPayment } from './truth-rules.js';

/**
 * A captured sale no attempt holds, kept as gateway money with no order, straight through the store
 * (what the reconciler does at an event's last retry): the row the operator routes then act on.
 */
export async function keepStraySale(
  t: TestKit,
  o: {
    id: string;
    amountMinor: number;
    sourceId: string;
    currency?: string;
    reference?: string | null;
    orderId?: string | null;
  },
) {
  return t.kit.store.unmatched.keep({
    transaction: {
      id: o.id,
      relatedId: null,
      type: 'sale',
      status: 'captured',
      amountMinor: o.amountMinor,
      currency: o.currency ?? 'EUR',
      refundedMinor: 0,
      reference: o.reference ?? null,
    },
    source: 'webhook',
    sourceId: o.sourceId,
    orderId: o.orderId ?? null,
  });
}

/** Money per currency, in minor units: what the report's unmatched totals must equal. */
export interface MoneySums {
  captured: number;
  refunded: number;
  disputed: number;
  net: number;
}

/**
 * The gateway's truth about payments no order holds (issue 44): over the embedded sandbox's own
 * records of the payments carrying `references` (a sale, or an auth and its capture), what each came
 * to by the rule every order is checked by (truth-rules.ts truthOfPayment), summed per currency:
 * captured, refunded, charged back now, and net after chargebacks.
 */
export function unmatchedTruth(t: TestKit, references: ReadonlySet<string>): Map<string, MoneySums> {
  const transactions = [...t.kit.sandbox!.deps.state.transactions.values()];
  const sums = new Map<string, MoneySums>();
  for (const p of transactions) {
    if (p.relatedId !== null || !references.has(p.reference)) continue;
    const capture = transactions.find((x) => x.type === 'capture' && x.relatedId === p.id);
    const truth = truthOfPayment('card', {
      type: p.type,
      status: p.status,
      amount: p.amount,
      refunded: p.refundedAmount,
      captureAmount: capture?.amount ?? null,
      captureBefore: p.captureBefore,
      chargeback: p.chargebackAmount,
    });
    const s = sums.get(p.currency) ?? { captured: 0, refunded: 0, disputed: 0, net: 0 };
    s.captured += truth.captured ?? 0;
    s.refunded += truth.refunded;
    s.disputed += truth.disputed ?? 0;
    s.net = s.captured - s.refunded - s.disputed;
    sums.set(p.currency, s);
  }
  return sums;
}
