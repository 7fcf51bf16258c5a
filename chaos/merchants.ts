import type { Random } from './random.js';

/**
 * The merchants the storm's kit acts for (platform mode, issue 45: a partner key's linked merchants,
 * each with its own key), and the merchant each order was made for, to hold the kit to it.
 */
export class OrderMerchants {
  /** The merchant each order the kit made was asked for, by order id. */
  readonly ofOrder = new Map<string, number>();

  constructor(
    readonly ids: readonly number[],
    private readonly random: Random,
  ) {
    if (ids.length === 0) throw new Error('the storm needs a merchant');
  }

  /** A merchant for the next order: each as likely. */
  pick(): number {
    return this.ids[Math.floor(this.random() * this.ids.length)]!;
  }

  /** The kit made `orderId` for `merchant`. */
  made(orderId: string, merchant: number): void {
    this.ofOrder.set(orderId, merchant);
  }
}
