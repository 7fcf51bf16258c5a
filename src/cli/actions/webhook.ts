import { GatewayError } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import { localUrl } from '../../config.js';
import { secretLabel, webhookUrl } from '../../kit/gateway.js';
import { orderMerchant } from '../../merchant/orders/order-merchant.js';
import { type SecretOwner, secretOwner } from '../../merchant/store/secrets.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';
import { summaryLines } from '../progress.js';

/** `webhook register|status|rotate|test` (registered in ../webhook.ts). */

/** `--merchant <id>`: which merchant's endpoint (issue 45, platform mode). */
export interface MerchantOption {
  merchant?: string;
}

/**
 * The endpoint a command acts on: the merchant `--merchant` names, required when the kit acts for
 * several (GATEWAY_MERCHANTS), the one it acts for otherwise; its gateway (a partner key naming it),
 * its secrets' owner, and its receiver URL. A wrong `--merchant` is one line and exit 1.
 */
async function endpointOf(kit: KitSession, o: MerchantOption) {
  const served = kit.config.gateway.merchants;
  let named: number | undefined;
  if (o.merchant !== undefined) {
    if (!/^[1-9]\d{0,9}$/.test(o.merchant)) fail('--merchant: must be a merchant id (an integer)');
    named = Number(o.merchant);
  }
  const chosen = orderMerchant(served, named);
  if ('problem' in chosen) fail(`--merchant: ${chosen.problem}`);
  const id = chosen.merchantId;
  const c = kit.config;
  const base = c.publicBaseUrl ?? localUrl(c.host, c.port);
  return {
    id,
    gateway: async (): Promise<GatewayClient> => (await kit.gateways()).of(id),
    owner: secretOwner(served, id),
    url: webhookUrl(base, served, id),
    /** How the merchant is named in what the command says, when the kit acts for several. */
    whose: served.length > 1 ? ` of merchant ${id}` : '',
  };
}

export async function register(kit: KitSession, options: { url?: string; events?: string } & MerchantOption) {
  const endpoint = await endpointOf(kit, options);
  const answer = await (await endpoint.gateway()).putWebhook({
    url: options.url ?? endpoint.url,
    events: options.events === undefined ? undefined : options.events.split(',').map((s) => s.trim()),
  });
  if (answer.data.secret) {
    await keep(kit, answer.data.secret, endpoint.owner);
    console.log(`endpoint${endpoint.whose} created; its signing secret is stored (encrypted)`);
  } else {
    console.log(`endpoint${endpoint.whose} updated; the stored secret is unchanged`);
  }
  print(answer.data.endpoint);
}

export async function status(kit: KitSession, options: MerchantOption = {}) {
  const endpoint = await endpointOf(kit, options);
  const record = await (await endpoint.gateway())
    .getWebhook()
    .then((answer) => answer.data)
    .catch((error) => {
      if (!(error instanceof GatewayError && error.status === 404)) throw error;
      const flag = endpoint.whose === '' ? '' : ` --merchant ${endpoint.id}`;
      fail(
        `no webhook endpoint${endpoint.whose} at the gateway: \`npm run cli -- webhook register${flag}\` creates one`,
      );
    });
  const secrets = await (await kit.store()).secrets.counts(endpoint.owner);
  print(record);
  console.log(
    summaryLines('delivery health', [
      ...(endpoint.whose === '' ? [] : ([['merchant', endpoint.id]] as [string, number | null][])),
      ['status', record.delivery_status ?? null],
      ['consecutive failures', record.consecutive_failures],
      ['last failure', record.last_failure_at ?? null],
      ['last success', record.last_success_at ?? null],
      ['secrets accepted', `${secrets.active} active, ${secrets.inGrace} retired in their grace`],
    ]),
  );
}

export async function rotate(kit: KitSession, options: MerchantOption = {}) {
  const endpoint = await endpointOf(kit, options);
  const answer = await (await endpoint.gateway()).rotateWebhookSecret();
  await keep(kit, answer.data.secret, endpoint.owner);
  console.log(
    `secret${endpoint.whose} rotated and stored; the gateway signs with the new one only, and the receiver still accepts the old one for 5 minutes (deliveries already on their way)`,
  );
}

export async function test(kit: KitSession, options: MerchantOption = {}) {
  const endpoint = await endpointOf(kit, options);
  print((await (await endpoint.gateway()).testWebhook()).data);
}

/**
 * The signing secret, stored as its merchant's under the label the receiver reads it by (the embedded
 * sandbox's, or the configured gateway's); before the kit's first start too, so the database is made
 * if missing. A rotation retires that merchant's secrets only.
 */
async function keep(kit: KitSession, secret: string, owner: SecretOwner): Promise<void> {
  await (await kit.store({ create: true })).secrets.put(secret, secretLabel(kit.config), true, owner);
}
