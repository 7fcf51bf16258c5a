/**
 * What the demo shop's page hands its script: rendered by the server (demo-shop.ts) as JSON in the
 * page's `#demo-settings` element, read once by the script (page.ts). A type only, shared by both sides.
 */
export interface DemoShopScriptSettings {
  /**
   * Platform mode: the merchants the kit acts for, offered in the page's picker (`#merchant`); the
   * order placed names the one picked. Empty when the kit acts for one merchant: no picker.
   */
  merchants: readonly number[];
  /** Statuses still being confirmed: the order is fetched again while it has one. */
  waiting: readonly string[];
  refreshMs: number;
  maxRefreshes: number;
  /** The review queue's page size. */
  queuePage: number;
  /** What a person may say of a flagged order (POST /orders/{id}/review). */
  resolutions: readonly string[];
  /** The signed-in customer the page acts for, with the token the shop's server made for it. */
  customer: {
    id: string;
    token: string;
    /** Platform mode: the customer's token at each merchant (merchant id to token); empty otherwise. */
    tokens: Readonly<Record<string, string>>;
    expires_at: string;
  };
  /** The header the customer's token goes in. */
  tokenHeader: string;
  /** The header an order's client secret goes in (its reads and payments as the shopper). */
  secretHeader: string;
}
