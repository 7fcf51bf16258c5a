import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `operator add|list|revoke`: named operators' tokens, each person their own, with a role. What runs
 * is in actions/operators.ts, loaded by the command that runs: `--help` loads none of it.
 */
export function addOperators(program: Command): void {
  const run = () => import('./actions/operators.js');
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
    .option(
      '--merchants <ids>',
      'scope the token to these merchants (comma-separated, among GATEWAY_MERCHANTS): it sees their orders and customers alone; default every merchant',
    )
    .option('--by <name>', 'who adds them (kept in the audit log; default: this system user)')
    .action(
      kitAction(async (kit, name: string, o: { role: string; merchants?: string; by?: string }) =>
        (await run()).add(kit, name, o),
      ),
    );

  operator
    .command('list')
    .description('operators with a live token, newest first (JSON on stdout); never a token')
    .option('--all', 'the revoked too')
    .action(kitAction(async (kit, o: { all?: boolean }) => (await run()).list(kit, o)));

  operator
    .command('revoke <name>')
    .description("revoke an operator's token (by name, or by id opr_...): refused from the next request on")
    .option('--by <name>', 'who revokes it (kept in the audit log; default: this system user)')
    .action(kitAction(async (kit, name: string, o: { by?: string }) => (await run()).revoke(kit, name, o)));
}
