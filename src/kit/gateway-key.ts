import type { Logger } from 'pino';
import type { Caller } from '../client/budget.js';
import { GatewayError } from '../client/errors.js';
import type { GatewayClient } from '../client/gateway-client.js';
import type { GatewayKeyInfo } from '../client/schemas.js';
import { SettingError } from '../shared/setting-error.js';

/** A key the kit cannot work with: start-up stops with one line naming the variable to fix. */
export class GatewayKeyError extends SettingError {
  override name = 'GatewayKeyError';
  constructor(
    readonly label: 'GATEWAY_API_KEY' | 'GATEWAY_MERCHANT_ID',
    message: string,
  ) {
    super(message);
  }
}

/** What start-up learnt of the key, as readyz reports it: null fields where the gateway did not say. */
export interface KeyReport {
  key_type: 'merchant' | 'partner' | null;
  /** The merchant the kit acts for: the key's own, or GATEWAY_MERCHANT_ID with a partner key. */
  merchant_id: number | null;
  scopes: string[] | null;
}

/** The gateway did not describe its key: it lacks the operation, or did not answer. */
export const KEY_NOT_DESCRIBED: KeyReport = { key_type: null, merchant_id: null, scopes: null };

const WEBHOOKS_MANAGE = 'webhooks:manage';

/** Whether the key may manage the webhook endpoint, as far as the gateway said (unsaid: assume so). */
export const canManageWebhooks = (scopes: readonly string[] | null) =>
  scopes === null || scopes.includes(WEBHOOKS_MANAGE);

/**
 * Judges the key the gateway describes against the configuration: a refusal when the kit cannot take
 * payments for the right merchant with it, warnings for what will fail later (gateway-api.md,
 * Authentication rules 2 and 3). Pure.
 */
export function judgeKey(
  info: GatewayKeyInfo,
  merchantId: number | undefined,
): { refusal: GatewayKeyError | null; warnings: string[]; report: KeyReport } {
  const scopes = info.scopes ?? null;
  const warnings: string[] = [];
  if (!canManageWebhooks(scopes))
    warnings.push(
      `the gateway key lacks the ${WEBHOOKS_MANAGE} scope: the kit cannot register its webhook endpoint, rotate its secret, or list and replay missed events (recovery)`,
    );
  if (info.key_type === 'partner') {
    const linked = info.linked_merchant_ids;
    const named = linked === undefined ? '' : ` (linked merchants: ${linked.join(', ') || 'none'})`;
    if (merchantId === undefined)
      return refuse(
        'GATEWAY_MERCHANT_ID',
        `required with a partner key: the merchant the kit acts for${named}`,
      );
    if (linked !== undefined && !linked.includes(merchantId))
      return refuse(
        'GATEWAY_MERCHANT_ID',
        `merchant ${merchantId} is not linked to this partner key${named}`,
      );
    warnings.push(
      'the gateway key is a partner key: capture, refund and void are merchant-only, so auth payments cannot be captured and nothing can be refunded or voided through the kit',
    );
    return { refusal: null, warnings, report: { key_type: 'partner', merchant_id: merchantId, scopes } };
  }
  const own = info.merchant_id;
  if (merchantId !== undefined && own !== undefined && merchantId !== own)
    return refuse(
      'GATEWAY_MERCHANT_ID',
      `${merchantId}, but the key is merchant ${own}'s own: a merchant key acts on its own account (unset it)`,
    );
  return {
    refusal: null,
    warnings,
    report: { key_type: 'merchant', merchant_id: own ?? merchantId ?? null, scopes },
  };

  function refuse(label: GatewayKeyError['label'], message: string) {
    return { refusal: new GatewayKeyError(label, message), warnings: [], report: KEY_NOT_DESCRIBED };
  }
}

/**
 * Start-up's check of the key: reads the key's information from the gateway and judges it. Throws a
 * GatewayKeyError (one line, exit 1) for an unknown or inactive key and for a merchant the key cannot
 * act for; logs a warning for what will fail later. A gateway without the operation (404), or one
 * that does not answer now, is tolerated: the kit starts, and the payments themselves tell.
 */
export async function checkGatewayKey(
  client: Pick<GatewayClient, 'apiKeyInfo'>,
  merchantId: number | undefined,
  logger: Logger,
  caller: Caller = 'operator',
): Promise<KeyReport> {
  let info: GatewayKeyInfo;
  try {
    info = (await client.apiKeyInfo(caller)).data;
  } catch (error) {
    if (error instanceof GatewayError && error.status === 401)
      throw new GatewayKeyError('GATEWAY_API_KEY', 'the gateway does not know this key (401)');
    if (error instanceof GatewayError && error.status === 403)
      throw new GatewayKeyError('GATEWAY_API_KEY', `the gateway refuses this key (403: ${error.message})`);
    const why = error instanceof GatewayError ? `${error.status} ${error.code}` : (error as Error).message;
    logger.warn({ reason: why }, 'the gateway did not describe its key (GET /api/v1/api-key): not checked');
    return KEY_NOT_DESCRIBED;
  }
  const verdict = judgeKey(info, merchantId);
  if (verdict.refusal) throw verdict.refusal;
  for (const warning of verdict.warnings) logger.warn(warning);
  logger.info(verdict.report, 'gateway key checked');
  return verdict.report;
}
