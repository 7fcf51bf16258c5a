import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `keys discard-lost`: what APP_ENCRYPTION_KEY seals, when the key that sealed it is lost. What
 * runs is in actions/keys.ts, loaded when it runs.
 */
export function addKeys(program: Command): void {
  program
    .command('keys')
    .description(
      "what APP_ENCRYPTION_KEY seals: the webhook signing secrets, the saved cards, the orders' client secrets kept for Idempotency-Key replays and the merchants' stored gateway keys",
    )
    .command('discard-lost')
    .description(
      'forget what a lost key sealed: delete the webhook secrets no key opens, revoke the saved cards whose token no key opens, forget the Idempotency-Keys of POST /orders whose client secret no key opens, delete the stored merchant keys no key opens',
    )
    .option('--yes', 'do it (without: only counted)')
    .option(
      '--by <name>',
      'who discards them (kept in the audit log for each card; default: this system user)',
    )
    .action(
      kitAction(async (kit, o: { yes?: boolean; by?: string }) =>
        (await import('./actions/keys.js')).discardLost(kit, o),
      ),
    );
}
