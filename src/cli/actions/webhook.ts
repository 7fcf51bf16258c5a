import { GatewayError } from '../../client/errors.js';
import { localUrl } from '../../config.js';
import { secretLabel } from '../../kit/gateway.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';
import { summaryLines } from '../progress.js';

/** `webhook register|status|rotate|test` (registered in ../webhook.ts). */

export async function register(kit: KitSession, options: { url?: string; events?: string }) {
  const c = kit.config;
  const base = c.publicBaseUrl ?? localUrl(c.host, c.port);
  const answer = await (await kit.gateway()).putWebhook({
    url: options.url ?? `${base}/webhooks/gateway`,
    events: options.events === undefined ? undefined : options.events.split(',').map((s) => s.trim()),
  });
  if (answer.data.secret) {
    await keep(kit, answer.data.secret);
    console.log('endpoint created; its signing secret is stored (encrypted)');
  } else {
    console.log('endpoint updated; the stored secret is unchanged');
  }
  print(answer.data.endpoint);
}

export async function status(kit: KitSession) {
  const endpoint = await (await kit.gateway())
    .getWebhook()
    .then((answer) => answer.data)
    .catch((error) => {
      if (!(error instanceof GatewayError && error.status === 404)) throw error;
      fail('no webhook endpoint at the gateway: `npm run cli -- webhook register` creates one');
    });
  const secrets = await (await kit.store()).secrets.counts();
  print(endpoint);
  console.log(
    summaryLines('delivery health', [
      ['status', endpoint.delivery_status ?? null],
      ['consecutive failures', endpoint.consecutive_failures],
      ['last failure', endpoint.last_failure_at ?? null],
      ['last success', endpoint.last_success_at ?? null],
      ['secrets accepted', `${secrets.active} active, ${secrets.inGrace} retired in their grace`],
    ]),
  );
}

export async function rotate(kit: KitSession) {
  const answer = await (await kit.gateway()).rotateWebhookSecret();
  await keep(kit, answer.data.secret);
  console.log(
    'secret rotated and stored; the gateway signs with the new one only, and the receiver still accepts the old one for 5 minutes (deliveries already on their way)',
  );
}

export async function test(kit: KitSession) {
  print((await (await kit.gateway()).testWebhook()).data);
}

/**
 * The signing secret, stored under the label the receiver reads it by (the embedded sandbox's, or
 * the configured gateway's); before the kit's first start too, so the database is made if missing.
 */
async function keep(kit: KitSession, secret: string): Promise<void> {
  await (await kit.store({ create: true })).secrets.put(secret, secretLabel(kit.config));
}
