import { enableCompileCache } from 'node:module';
import { Command } from 'commander';
import { addCustomers } from './cli/customers.js';
import { addDisputes } from './cli/disputes.js';
import { addJobs } from './cli/jobs.js';
import { addKeys } from './cli/keys.js';
import { addMerchantKeys } from './cli/merchant-keys.js';
import { addMigrate } from './cli/migrate.js';
import { addOperators } from './cli/operators.js';
import { addOrderEvents } from './cli/order-events.js';
import { addReport } from './cli/report.js';
import { addSandbox } from './cli/sandbox.js';
import { addUnmatched } from './cli/unmatched.js';
import { addWebhook } from './cli/webhook.js';

// Node's cache of compiled code (in the system's temporary folder): a command compiles none of the
// modules the one before it loaded (sequelize and the few hundred files it requires among them), a tenth
// of its start. Where it cannot be written nothing is cached, and nothing fails.
enableCompileCache();

/**
 * `npm run cli -- <command>`: the operator's tools (merchant.md, Running it), one module per group of
 * commands under cli/, which registers them with their help and nothing else; what a command does is
 * in cli/actions/, loaded by the command that runs. Each runs with the kit's own parts
 * (cli/kit-session.ts: the store, the gateway client within the key's shared budget, the kit's
 * clock), built when it first uses them: so `--help` loads none of them, and a command that reads
 * one table neither Redis nor the gateway client. `npm run cli` runs this compiled (tsconfig.cli.json).
 */
const program = new Command('merchant-kit').description('Operator commands of the merchant payment kit');

addMigrate(program);
addWebhook(program);
addKeys(program);
addMerchantKeys(program);
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
