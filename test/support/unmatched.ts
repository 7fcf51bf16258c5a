import type { TestKit } from './kit.js';

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
