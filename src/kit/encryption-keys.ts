import type { Logger } from 'pino';
import type { Store } from '../merchant/store/index.js';
import { SettingError } from '../shared/setting-error.js';

/** The key does not open what the database holds sealed: start-up stops with one line. */
export class EncryptionKeyError extends SettingError {
  override name = 'EncryptionKeyError';
  readonly label = 'APP_ENCRYPTION_KEY';
}

/** What the database holds sealed under APP_ENCRYPTION_KEY and must open for the kit to work. */
type Sealed = Pick<Store, 'secrets' | 'savedCards' | 'orderRequests' | 'merchantKeys'>;

const WHAT_TO_DO =
  'set the key that sealed them (to replace a key: the new one here, the old one in APP_ENCRYPTION_KEY_PREVIOUS); if that key is lost, `npm run cli -- keys discard-lost --yes` forgets what it sealed';

/**
 * Start-up, before anything opens a sealed value. With previous keys (APP_ENCRYPTION_KEY_PREVIOUS),
 * what they sealed is sealed again under the current key, so they can be dropped from the setting
 * later. Then the check: another key (a replica set up with a different one, a key replaced without
 * its predecessor listed) would otherwise let the kit start and answer every webhook 503, every
 * saved card 500, with nothing saying why.
 */
export async function settleEncryptionKeys(
  sealed: Sealed,
  options: { rotating: boolean; logger?: Pick<Logger, 'info'> },
): Promise<void> {
  if (options.rotating) {
    const secrets = await sealed.secrets.reseal();
    const cards = await sealed.savedCards.reseal();
    const orders = await sealed.orderRequests.reseal();
    const merchantKeys = await sealed.merchantKeys.reseal();
    if (secrets.resealed + cards.resealed + orders.resealed + merchantKeys.resealed > 0)
      options.logger?.info(
        {
          webhook_secrets: secrets.resealed,
          saved_cards: cards.resealed,
          order_secrets: orders.resealed,
          merchant_keys: merchantKeys.resealed,
        },
        'sealed again under APP_ENCRYPTION_KEY: what APP_ENCRYPTION_KEY_PREVIOUS sealed',
      );
  }
  const opener = options.rotating ? 'neither it nor APP_ENCRYPTION_KEY_PREVIOUS opens' : 'does not open';
  const secrets = await sealed.secrets.unopened();
  if (secrets > 0)
    throw new EncryptionKeyError(
      `${opener} ${secrets} of the webhook signing secrets stored in this database (sealed under another key): ${WHAT_TO_DO}`,
    );
  if (!(await sealed.savedCards.newestOpens()))
    throw new EncryptionKeyError(
      `${opener} the saved cards stored in this database (sealed under another key): ${WHAT_TO_DO}`,
    );
  if (!(await sealed.orderRequests.newestOpens()))
    throw new EncryptionKeyError(
      `${opener} the orders' client secrets kept for Idempotency-Key replays (sealed under another key): ${WHAT_TO_DO}`,
    );
  // Each named: a merchant's key is the kit's only one for that merchant, and there are a handful.
  const merchants = await sealed.merchantKeys.unopened();
  if (merchants.length > 0) {
    const whose =
      merchants.length > 1 ? `keys of merchants ${merchants.join(', ')}` : `key of merchant ${merchants[0]}`;
    throw new EncryptionKeyError(
      `${opener} the gateway ${whose} stored in this database (sealed under another key): ${WHAT_TO_DO}; or \`npm run cli -- merchant-key remove --merchant <id>\` forgets one, and \`merchant-key set\` stores it again`,
    );
  }
}
