import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `webhook register|status|rotate|test`: the gateway's webhook endpoint for this kit, through the
 * kit's gateway client (its calls within the key's shared budget); a signing secret the gateway hands
 * out is stored encrypted in the kit's store, never printed. What runs is in actions/webhook.ts.
 */
export function addWebhook(program: Command): void {
  const run = () => import('./actions/webhook.js');
  const webhook = program.command('webhook').description("the gateway's webhook endpoint for this kit");

  webhook
    .command('register')
    .description('create or update the endpoint; a new signing secret is stored encrypted, never printed')
    .option('--url <url>', 'the receiver URL (default: PUBLIC_BASE_URL/webhooks/gateway)')
    .option('--events <types>', 'comma-separated event types (default: the gateway default set)')
    .action(kitAction(async (kit, o: { url?: string; events?: string }) => (await run()).register(kit, o)));

  webhook
    .command('status')
    .description("the endpoint's configuration and delivery health, and the secrets the receiver accepts")
    .action(kitAction(async (kit) => (await run()).status(kit)));

  webhook
    .command('rotate')
    .description('rotate the signing secret (a hard cutover at the gateway) and store the new one')
    .action(kitAction(async (kit) => (await run()).rotate(kit)));

  webhook
    .command('test')
    .description('ask the gateway to send a signed test ping')
    .action(kitAction(async (kit) => (await run()).test(kit)));
}
