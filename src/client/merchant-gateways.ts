import { GatewayError } from './errors.js';
import { GatewayClient, type GatewayClientOptions } from './gateway-client.js';

/**
 * The gateway as each merchant's orders see it (issue 45, platform mode). A merchant key acts on its
 * own account: one client for everything. A partner key acts for its linked merchants by naming them
 * (gateway-api.md, Authentication rule 2), but 3D Secure, capture, refund and void are merchant-only:
 * those go with the merchant's own key when it was given one, and are refused here, before any request,
 * when it was not, so that the shop reads why (a 409) instead of the gateway's 403 as a failure.
 */
export interface Gateways<G = GatewayClient> {
  /** The merchants the kit acts for, in the order configured; empty: the key's own account, id unknown. */
  readonly merchants: readonly number[];
  /** The gateway for an order of `merchantId`; null: the first merchant (orders made before platform mode). */
  of(merchantId: number | null): G;
  /** Why `operation` cannot be done for this merchant's orders; null when it can. */
  refusal(merchantId: number | null, operation: MerchantOnly): MerchantKeyMissing | null;
}

/** What only a merchant key may ask the gateway (gateway-api.md: the 3DS verify, capture, refund, void). */
export type MerchantOnly = '3D Secure' | 'capture' | 'refund' | 'void';

/** A merchant-only operation for a linked merchant the kit has no merchant key for. */
export class MerchantKeyMissing extends Error {
  override name = 'MerchantKeyMissing';
  constructor(
    readonly merchantId: number,
    readonly operation: MerchantOnly,
  ) {
    super(
      `Merchant ${merchantId} has no merchant key of its own in this kit (GATEWAY_MERCHANT_KEYS, or stored with \`merchant-key set\`): ${operation} is merchant-only at the gateway, and the partner key may not ask it. Nothing was sent.`,
    );
  }
}

/**
 * The gateway refused a merchant's own key (401 or 403) on a merchant-only call: the key the kit has
 * for that merchant is wrong, revoked or inactive. Authentication comes first at the gateway
 * (gateway-api.md, Authentication rule 4), so nothing was done there.
 */
export class MerchantKeyRefused extends Error {
  override name = 'MerchantKeyRefused';
  constructor(
    readonly merchantId: number,
    readonly operation: MerchantOnly,
    readonly refusal: GatewayError,
  ) {
    super(
      `The gateway refused merchant ${merchantId}'s own key for ${operation} (HTTP ${refusal.status}: ${refusal.message}): the merchant key this kit has for it (GATEWAY_MERCHANT_KEYS, or stored with \`merchant-key set\`) is wrong, revoked or inactive. Nothing was done; once the key is right, the same request does it.`,
    );
  }
}

/** An order of a merchant the kit no longer acts for (it left GATEWAY_MERCHANTS). */
export class MerchantNotServed extends Error {
  override name = 'MerchantNotServed';
  constructor(readonly merchantId: number) {
    super(`Merchant ${merchantId} is not among the merchants this kit acts for (GATEWAY_MERCHANTS).`);
  }
}

/** One linked merchant under a partner key: its requests name it, its merchant-only ones use its own key. */
class LinkedMerchantGateway extends GatewayClient {
  readonly #merchantId: number;
  readonly #own: GatewayClient | null;

  constructor(options: GatewayClientOptions & { merchantId: number }, own: GatewayClient | null) {
    super(options);
    this.#merchantId = options.merchantId;
    this.#own = own;
  }

  /** `call` with the merchant's own key; the gateway refusing that key is said as such. */
  async #withOwnKey<T>(operation: MerchantOnly, call: (own: GatewayClient) => Promise<T>): Promise<T> {
    if (!this.#own) throw new MerchantKeyMissing(this.#merchantId, operation);
    try {
      return await call(this.#own);
    } catch (error) {
      if (error instanceof GatewayError && (error.status === 401 || error.status === 403))
        throw new MerchantKeyRefused(this.#merchantId, operation, error);
      throw error;
    }
  }

  override verify3ds(...a: Parameters<GatewayClient['verify3ds']>) {
    return this.#withOwnKey('3D Secure', (own) => own.verify3ds(...a));
  }
  override capture(...a: Parameters<GatewayClient['capture']>) {
    return this.#withOwnKey('capture', (own) => own.capture(...a));
  }
  override refund(...a: Parameters<GatewayClient['refund']>) {
    return this.#withOwnKey('refund', (own) => own.refund(...a));
  }
  override void(...a: Parameters<GatewayClient['void']>) {
    return this.#withOwnKey('void', (own) => own.void(...a));
  }
}

/** A merchant key's one account: every order goes through the one client. */
export function ownAccount<G>(client: G, merchantId: number | null = null): Gateways<G> {
  return {
    merchants: merchantId === null ? [] : [merchantId],
    of: () => client,
    refusal: () => null,
  };
}

/**
 * A partner key's linked merchants: a client per merchant naming it, each spending from the partner
 * key's one budget under its own share (`budgetTenant`), and a client of the merchant's own key where
 * one is given (its own budget: another key, another rate limit).
 */
export function linkedMerchants(
  options: GatewayClientOptions,
  merchants: readonly number[],
  ownKeys: ReadonlyMap<number, string>,
  ownOptions: (merchantId: number) => GatewayClientOptions = () => options,
): Gateways {
  if (merchants.length === 0) throw new Error('a partner key needs the merchants it acts for');
  const clients = new Map<number, GatewayClient>();
  for (const id of merchants) {
    const key = ownKeys.get(id);
    const own = key === undefined ? null : new GatewayClient({ ...ownOptions(id), apiKey: key });
    clients.set(id, new LinkedMerchantGateway({ ...options, merchantId: id, budgetTenant: String(id) }, own));
  }
  const of = (merchantId: number | null): GatewayClient => {
    const client = clients.get(merchantId ?? merchants[0]!);
    if (!client) throw new MerchantNotServed(merchantId!);
    return client;
  };
  return {
    merchants: [...merchants],
    of,
    refusal: (merchantId, operation) => {
      const id = merchantId ?? merchants[0]!;
      if (!clients.has(id)) return null; // of() says why
      return ownKeys.has(id) ? null : new MerchantKeyMissing(id, operation);
    },
  };
}
