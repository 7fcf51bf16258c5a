import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/** `migrate`: the database, created if missing, brought to the newest schema. */
export function addMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create the database if missing and apply every pending migration')
    .action(
      kitAction(async (kit) => {
        const applied = await kit.migrate();
        console.log(applied.length === 0 ? 'up to date' : `applied: ${applied.join(', ')}`);
      }),
    );
}
