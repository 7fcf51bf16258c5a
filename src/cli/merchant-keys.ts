import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `merchant-key set|remove|list`: platform mode's merchant keys stored at rest, sealed under
 * APP_ENCRYPTION_KEY, beside GATEWAY_MERCHANT_KEYS (which wins for a merchant given in both). What
 * runs is in actions/merchant-keys.ts, loaded by the command that runs.
 */
export function addMerchantKeys(program: Command): void {
  const run = () => import('./actions/merchant-keys.js');
  const merchantKey = program
    .command('merchant-key')
    .description(
      "platform mode: a linked merchant's own gateway key (for 3D Secure, capture, refund and void), stored sealed under APP_ENCRYPTION_KEY; the kit's processes read them at start",
    );

  merchantKey
    .command('set')
    .description(
      "store a merchant's own key, read from stdin (never the command line, where ps and the shell history would show it); checked with the gateway when it answers; replaces the one stored",
    )
    .requiredOption('--merchant <id>', 'the merchant, one of GATEWAY_MERCHANTS')
    .action(kitAction(async (kit, o: { merchant: string }) => (await run()).set(kit, o)));

  merchantKey
    .command('remove')
    .description("forget a merchant's stored key")
    .requiredOption('--merchant <id>', 'the merchant')
    .action(kitAction(async (kit, o: { merchant: string }) => (await run()).remove(kit, o)));

  merchantKey
    .command('list')
    .description(
      'the merchants with a stored key, when it was stored and whether the kit uses it (JSON on stdout); never a key',
    )
    .action(kitAction(async (kit) => (await run()).list(kit)));
}
