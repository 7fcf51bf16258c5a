import { Command } from 'commander';
import { addCustomers } from './cli/customers.js';
import { addDisputes } from './cli/disputes.js';
import { addJobs } from './cli/jobs.js';
import { addKeys } from './cli/keys.js';
import { addMigrate } from './cli/migrate.js';
import { addOperators } from './cli/operators.js';
import { addOrderEvents } from './cli/order-events.js';
import { addReport } from './cli/report.js';
import { addSandbox } from './cli/sandbox.js';
import { addUnmatched } from './cli/unmatched.js';
import { addWebhook } from './cli/webhook.js';

/**
 * `npm run cli -- <command>`: the operator's tools (merchant.md, Running it), one module per group of
 * commands under cli/. Each command runs with the kit's own parts (cli/kit-session.ts: the store, the
 * gateway client within the key's shared budget, the kit's clock), built when it first uses them: so
 * `--help`, or a command that reads one table, loads neither Redis nor the gateway client.
 */
const program = new Command('merchant-kit').description('Operator commands of the merchant payment kit');

addMigrate(program);
addWebhook(program);
addKeys(program);
addJobs(program);
addReport(program);
addOrderEvents(program);
addDisputes(program);
addUnmatched(program);
addOperators(program);
addCustomers(program);
addSandbox(program);

program.parseAsync(process.argv).catch(async (error: Error) => {
  const { explain } = await import('./cli/explain.js');
  console.error(explain(error));
  process.exit(1);
});
