import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `recover` and `poll`: background jobs of the kit, run now beside it, each under its job's lock (so
 * never beside a scheduler's run of it) and within the key's shared budget; a summary on stdout.
 * What runs is in actions/jobs.ts, loaded by the command that runs.
 */
export function addJobs(program: Command): void {
  const run = () => import('./actions/jobs.js');
  program
    .command('recover')
    .description(
      "fetch the gateway's events the inbox lacks, store and queue them (default: from the checkpoint)",
    )
    .option(
      '--since <timestamp>',
      'list events created from this ISO 8601 time instead of the stored checkpoint',
    )
    .action(kitAction(async (kit, o: { since?: string }) => (await run()).recover(kit, o)));

  program
    .command('poll')
    .description(
      'ask the gateway now about every watched order, whatever its schedule, within the shared budget',
    )
    .action(kitAction(async (kit) => (await run()).poll(kit)));
}
