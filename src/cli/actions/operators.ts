import { isOperatorRole, OPERATOR_ROLES, operatorNameProblem } from '../../merchant/operators/roles.js';
import { parseScope } from '../../merchant/orders/order-merchant.js';
import { OperatorExists } from '../../merchant/store/index.js';
import { cliActor, systemUser } from '../input.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';

/** `operator add|list|revoke` (registered in ../operators.ts), loaded when one of them runs. */

export async function add(
  kit: KitSession,
  name: string,
  options: { role: string; merchants?: string; by?: string },
) {
  const problem = operatorNameProblem(name);
  if (problem) return fail(`<name>: ${problem}`);
  if (!isOperatorRole(options.role))
    return fail(`--role: must be ${OPERATOR_ROLES.join(', ')} (got "${options.role}")`);
  const role = options.role;
  // Platform mode (issue 45): a token for some merchants alone, each one the kit serves.
  const scope =
    options.merchants === undefined ? null : parseScope(options.merchants, kit.config.gateway.merchants);
  if (scope !== null && 'problem' in scope) return fail(`--merchants: ${scope.problem}`);
  const actor = cliActor(options.by, systemUser);
  // Before the kit's first start too: the database is made if missing.
  const store = await kit.store({ create: true });
  const added = await store.operators
    .add({ name, role, merchants: scope, by: actor })
    .catch((error: Error) =>
      error instanceof OperatorExists ? fail(`<name>: ${error.message}`) : Promise.reject(error),
    );
  const merchants = scope === null ? '' : `, merchants ${scope.join(', ')}`;
  console.log(`operator ${added.operator.name} added: role ${role}${merchants}, id ${added.operator.id}`);
  console.log('token (shown this once: hand it to them now; it cannot be shown again, only revoked):');
  console.log(added.token);
}

export async function list(kit: KitSession, options: { all?: boolean }) {
  const operators = await (await kit.store()).operators.list({ all: options.all === true });
  print(operators.map(({ token_hash: _hash, active_name: _active, ...o }) => o));
}

export async function revoke(kit: KitSession, name: string, options: { by?: string }) {
  const actor = cliActor(options.by, systemUser);
  const revoked = await (await kit.store()).operators.revoke(name, actor);
  if (!revoked) return fail(`<name>: no live operator token has the name or id ${name}`);
  console.log(`operator ${revoked.name} (${revoked.role}, ${revoked.id}) revoked`);
}
