import type { Logger } from 'pino';

/** The merchant keys the kit uses, and where each came from (merchant ids only: never a key). */
export interface MerchantKeysInUse {
  keys: Map<number, string>;
  /** The merchants whose key GATEWAY_MERCHANT_KEYS gives. */
  environment: number[];
  /** The merchants whose stored key (`merchant-key set`) is used: none in the environment. */
  stored: number[];
  /** The merchants with a stored key that GATEWAY_MERCHANT_KEYS overrides. */
  overridden: number[];
  /** Stored keys of merchants GATEWAY_MERCHANTS does not list: kept, not used. */
  unused: number[];
}

/**
 * Platform mode (issue 45): a merchant's own key comes from GATEWAY_MERCHANT_KEYS or from the store.
 * The environment wins for a merchant given in both: it is what the operator set for this process,
 * and the way to try a key without touching the database. Pure.
 */
export function merchantKeysInUse(
  environment: ReadonlyMap<number, string>,
  stored: ReadonlyMap<number, string>,
  merchants: readonly number[],
): MerchantKeysInUse {
  const used: MerchantKeysInUse = {
    keys: new Map(),
    environment: [],
    stored: [],
    overridden: [],
    unused: [],
  };
  for (const id of merchants) {
    const fromEnvironment = environment.get(id);
    const fromStore = stored.get(id);
    if (fromEnvironment !== undefined) {
      used.keys.set(id, fromEnvironment);
      used.environment.push(id);
      if (fromStore !== undefined) used.overridden.push(id);
    } else if (fromStore !== undefined) {
      used.keys.set(id, fromStore);
      used.stored.push(id);
    }
  }
  used.unused = [...stored.keys()].filter((id) => !merchants.includes(id)).sort((a, b) => a - b);
  return used;
}

/**
 * The merchant keys a process of the kit starts with: the environment's and, in platform mode
 * (GATEWAY_MERCHANTS set), the stored ones, read through `stored`; which came from where is logged
 * at info, by merchant id. Without merchants listed no merchant key is used: the store is not asked.
 */
export async function startingMerchantKeys(
  merchants: readonly number[],
  environment: ReadonlyMap<number, string>,
  stored: (() => Promise<ReadonlyMap<number, string>>) | undefined,
  logger: Pick<Logger, 'info'>,
): Promise<ReadonlyMap<number, string>> {
  if (merchants.length === 0 || stored === undefined) return environment;
  const used = merchantKeysInUse(environment, await stored(), merchants);
  if (used.environment.length + used.stored.length + used.unused.length > 0)
    logger.info(
      {
        from_environment: used.environment,
        stored: used.stored,
        environment_over_stored: used.overridden,
        stored_unused: used.unused,
      },
      'merchant keys: GATEWAY_MERCHANT_KEYS, then those stored (merchant-key set)',
    );
  return used.keys;
}
