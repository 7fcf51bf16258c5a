import type { Command } from 'commander';
import { kitAction } from './kit-session.js';

/**
 * `customers token|cards|erase`: a customer's token for trying the API by hand, their saved cards, and
 * forgetting them (issue 43). What runs is in actions/customers.ts, loaded by the command that runs.
 */
/** Platform mode (issue 45): a customer id names a customer of one merchant. */
const MERCHANT =
  'whose customer: one of GATEWAY_MERCHANTS, required when it lists several (default: the one merchant)';

export function addCustomers(program: Command): void {
  const run = () => import('./actions/customers.js');
  const customers = program
    .command('customers')
    .description("customers' saved cards, by the shop's own customer id (merchant_customer_id)");

  customers
    .command('token <customer_id>')
    .description(
      "a customer's token (an hour), as POST /customers/{id}/tokens makes it: for trying the API by hand",
    )
    .option('--order <order_id>', "a token that also pays this order of the customer's with a saved card")
    .option('--merchant <id>', MERCHANT)
    .action(
      kitAction(async (kit, id: string, o: { order?: string; merchant?: string }) =>
        (await run()).token(kit, id, o),
      ),
    );

  customers
    .command('cards <customer_id>')
    .description(
      "the customer's active saved cards as the kit last knew them (JSON); never a number or a token",
    )
    .option('--merchant <id>', MERCHANT)
    .action(kitAction(async (kit, id: string, o: { merchant?: string }) => (await run()).cards(kit, id, o)));

  customers
    .command('erase <customer_id>')
    .description(
      'forget a customer, as POST /customers/{id}/erase does: their personal data on every order, in the kept webhook payloads and order events, their saved cards (revoked at the gateway); the money stays (JSON)',
    )
    .option('--merchant <id>', MERCHANT)
    .option('--by <name>', 'who asked for it, kept in the audit log (default: the system user)')
    .action(
      kitAction(async (kit, id: string, o: { merchant?: string; by?: string }) =>
        (await run()).erase(kit, id, o),
      ),
    );
}
