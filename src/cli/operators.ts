import type { Command } from 'commander';
import { isOperatorRole, OPERATOR_ROLES, operatorNameProblem } from '../merchant/operators/roles.js';
import { cliActor, systemUser } from './input.js';
import { kitAction } from './kit-session.js';
import { fail, print } from './output.js';

/** `operator add|list|revoke`: named operators' tokens, each person their own, with a role. */
export function addOperators(program: Command): void {
  const operator = program
    .command('operator')
    .description(
      "named operators' tokens: each person their own, with a role (operator, finance, viewer), and the shop's server (storefront)",
    );

  operator
    .command('add <name>')
    .description('a new operator and their token, printed once: only its SHA-256 is stored')
    .requiredOption(
      '--role <role>',
      "operator (capture, refund, void), finance (reports, reviews, audit), viewer, or storefront (the shop's server: customers' tokens)",
    )
    .option('--by <name>', 'who adds them (kept in the audit log; default: this system user)')
    .action(
      kitAction(async (kit, name: string, options: { role: string; by?: string }) => {
        const problem = operatorNameProblem(name);
        if (problem) return fail(`<name>: ${problem}`);
        if (!isOperatorRole(options.role))
          return fail(`--role: must be ${OPERATOR_ROLES.join(', ')} (got "${options.role}")`);
        const role = options.role;
        const actor = cliActor(options.by, systemUser);
        // Before the kit's first start too: the database is made if missing.
        const store = await kit.store({ create: true });
        const { OperatorExists } = await import('../merchant/store/index.js');
        const added = await store.operators
          .add({ name, role, by: actor })
          .catch((error: Error) =>
            error instanceof OperatorExists ? fail(`<name>: ${error.message}`) : Promise.reject(error),
          );
        console.log(`operator ${added.operator.name} added: role ${role}, id ${added.operator.id}`);
        console.log('token (shown this once: hand it to them now; it cannot be shown again, only revoked):');
        console.log(added.token);
      }),
    );

  operator
    .command('list')
    .description('operators with a live token, newest first (JSON on stdout); never a token')
    .option('--all', 'the revoked too')
    .action(
      kitAction(async (kit, options: { all?: boolean }) => {
        const list = await (await kit.store()).operators.list({ all: options.all === true });
        print(list.map(({ token_hash: _hash, active_name: _active, ...o }) => o));
      }),
    );

  operator
    .command('revoke <name>')
    .description("revoke an operator's token (by name, or by id opr_...): refused from the next request on")
    .option('--by <name>', 'who revokes it (kept in the audit log; default: this system user)')
    .action(
      kitAction(async (kit, name: string, options: { by?: string }) => {
        const actor = cliActor(options.by, systemUser);
        const revoked = await (await kit.store()).operators.revoke(name, actor);
        if (!revoked) return fail(`<name>: no live operator token has the name or id ${name}`);
        console.log(`operator ${revoked.name} (${revoked.role}, ${revoked.id}) revoked`);
      }),
    );
}
