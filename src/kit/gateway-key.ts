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
    readonly label: 'GATEWAY_API_KEY' | 'GATEWAY_MERCHANTS',
    message: string,
  ) {
    super(message);
  }
}

/** What start-up learnt of the key, as readyz reports it: null fields where the gateway did not say. */
export interface KeyReport {
  key_type: 'merchant' | 'partner' | null;
  /** The merchant the kit acts for first: the key's own, or the first of GATEWAY_MERCHANTS with a partner key. */
  merchant_id: number | null;
  /** Every merchant the kit acts for (platform mode: several); empty when the gateway did not say. */
  merchant_ids: number[];
  scopes: string[] | null;
}

/** The gateway did not describe its key: it lacks the operation, or did not answer. */
export const KEY_NOT_DESCRIBED: KeyReport = {
  key_type: null,
  merchant_id: null,
  merchant_ids: [],
  scopes: null,
};

const WEBHOOKS_MANAGE = 'webhooks:manage';

/** Whether the key may manage the webhook endpoint, as far as the gateway said (unsaid: assume so). */
export const canManageWebhooks = (scopes: readonly string[] | null) =>
  scopes === null || scopes.includes(WEBHOOKS_MANAGE);

/**
 * Judges the key the gateway describes against the merchants configured (GATEWAY_MERCHANTS): a
 * refusal when the kit cannot take payments for the right merchants with it, warnings for what will
 * fail later (gateway-api.md, Authentication rules 2 and 3). `merchantKeys`: the merchants that have
 * their own key beside a partner key (the environment's and the stored ones). Pure.
 */
export function judgeKey(
  info: GatewayKeyInfo,
  merchants: readonly number[],
  merchantKeys: ReadonlySet<number> = new Set(),
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
    if (merchants.length === 0)
      return refuse(
        'GATEWAY_MERCHANTS',
        `required with a partner key: the merchants the kit acts for${named}`,
      );
    const unlinked = linked === undefined ? undefined : merchants.find((id) => !linked.includes(id));
    if (unlinked !== undefined)
      return refuse('GATEWAY_MERCHANTS', `merchant ${unlinked} is not linked to this partner key${named}`);
    const keyless = merchants.filter((id) => !merchantKeys.has(id));
    if (keyless.length > 0)
      warnings.push(
        `the gateway key is a partner key and merchant${keyless.length > 1 ? 's' : ''} ${keyless.join(', ')} ha${keyless.length > 1 ? 've' : 's'} no key of its own (GATEWAY_MERCHANT_KEYS, or stored with \`merchant-key set\`): 3D Secure, capture, refund and void are merchant-only, so their card payments, captures, refunds and voids answer 409 MERCHANT_KEY_MISSING`,
      );
    return {
      refusal: null,
      warnings,
      report: { key_type: 'partner', merchant_id: merchants[0]!, merchant_ids: [...merchants], scopes },
    };
  }
  const own = info.merchant_id;
  if (merchants.length > 1)
    return refuse(
      'GATEWAY_MERCHANTS',
      `lists ${merchants.length} merchants, but the key is a merchant key, which acts on its own account only: a partner key acts for several`,
    );
  const named = merchants[0];
  if (named !== undefined && own !== undefined && named !== own)
    return refuse(
      'GATEWAY_MERCHANTS',
      `${named}, but the key is merchant ${own}'s own: a merchant key acts on its own account (unset it)`,
    );
  const id = own ?? named ?? null;
  return {
    refusal: null,
    warnings,
    report: { key_type: 'merchant', merchant_id: id, merchant_ids: id === null ? [] : [id], scopes },
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
  merchants: readonly number[],
  merchantKeys: ReadonlySet<number>,
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
  const verdict = judgeKey(info, merchants, merchantKeys);
  if (verdict.refusal) throw verdict.refusal;
  for (const warning of verdict.warnings) logger.warn(warning);
  logger.info(verdict.report, 'gateway key checked');
  return verdict.report;
}
