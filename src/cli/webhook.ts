import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `webhook register|status|rotate|test [--merchant <id>]`: the gateway's webhook endpoint for this kit
 * (in platform mode, one per merchant), through the kit's gateway client (its calls within the key's
 * shared budget); a signing secret the gateway hands out is stored encrypted in the kit's store, as
 * its merchant's, never printed. What runs is in actions/webhook.ts.
 */
export function addWebhook(program: Command): void {
  const run = () => import('./actions/webhook.js');
  const webhook = program.command('webhook').description("the gateway's webhook endpoint for this kit");
  const merchant = [
    '--merchant <id>',
    'the merchant whose endpoint (required when the kit acts for several: GATEWAY_MERCHANTS; default: the one it acts for)',
  ] as const;

  webhook
    .command('register')
    .description('create or update the endpoint; a new signing secret is stored encrypted, never printed')
    .option(
      '--url <url>',
      'the receiver URL (default: PUBLIC_BASE_URL/webhooks/gateway, or PUBLIC_BASE_URL/webhooks/gateway/<merchant> when the kit acts for several)',
    )
    .option('--events <types>', 'comma-separated event types (default: the gateway default set)')
    .option(...merchant)
    .action(
      kitAction(async (kit, o: { url?: string; events?: string; merchant?: string }) =>
        (await run()).register(kit, o),
      ),
    );

  webhook
    .command('status')
    .description("the endpoint's configuration and delivery health, and the secrets the receiver accepts")
    .option(...merchant)
    .action(kitAction(async (kit, o: { merchant?: string }) => (await run()).status(kit, o)));

  webhook
    .command('rotate')
    .description(
      "rotate the signing secret (a hard cutover at the gateway) and store the new one; the merchant's old one is accepted 5 more minutes",
    )
    .option(...merchant)
    .action(kitAction(async (kit, o: { merchant?: string }) => (await run()).rotate(kit, o)));

  webhook
    .command('test')
    .description('ask the gateway to send a signed test ping')
    .option(...merchant)
    .action(kitAction(async (kit, o: { merchant?: string }) => (await run()).test(kit, o)));
}
