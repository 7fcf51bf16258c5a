import type { Command } from 'commander';
import { GatewayError } from '../client/errors.js';
import { localUrl } from '../config.js';
import { type KitSession, kitAction } from './kit-session.js';
import { fail, print } from './output.js';
import { summaryLines } from './progress.js';

/**
 * `webhook register|status|rotate|test`: the gateway's webhook endpoint for this kit, through the
 * kit's gateway client (its calls within the key's shared budget); a signing secret the gateway hands
 * out is stored encrypted in the kit's store, never printed.
 */
export function addWebhook(program: Command): void {
  const webhook = program.command('webhook').description("the gateway's webhook endpoint for this kit");

  webhook
    .command('register')
    .description('create or update the endpoint; a new signing secret is stored encrypted, never printed')
    .option('--url <url>', 'the receiver URL (default: PUBLIC_BASE_URL/webhooks/gateway)')
    .option('--events <types>', 'comma-separated event types (default: the gateway default set)')
    .action(
      kitAction(async (kit, options: { url?: string; events?: string }) => {
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
      }),
    );

  webhook
    .command('status')
    .description("the endpoint's configuration and delivery health, and the secrets the receiver accepts")
    .action(
      kitAction(async (kit) => {
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
      }),
    );

  webhook
    .command('rotate')
    .description('rotate the signing secret (a hard cutover at the gateway) and store the new one')
    .action(
      kitAction(async (kit) => {
        const answer = await (await kit.gateway()).rotateWebhookSecret();
        await keep(kit, answer.data.secret);
        console.log(
          'secret rotated and stored; the gateway signs with the new one only, and the receiver still accepts the old one for 5 minutes (deliveries already on their way)',
        );
      }),
    );

  webhook
    .command('test')
    .description('ask the gateway to send a signed test ping')
    .action(kitAction(async (kit) => print((await (await kit.gateway()).testWebhook()).data)));
}

/**
 * The signing secret, stored under the label the receiver reads it by (the embedded sandbox's, or
 * the configured gateway's); before the kit's first start too, so the database is made if missing.
 */
async function keep(kit: KitSession, secret: string): Promise<void> {
  const { secretLabel } = await import('../kit/gateway.js');
  await (await kit.store({ create: true })).secrets.put(secret, secretLabel(kit.config));
}
