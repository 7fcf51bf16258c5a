import type { Command } from 'commander';
import { CustomerTokens } from '../merchant/customers/customer-token.js';
import { customerIdProblem } from '../merchant/customers/saved-card.js';
import { kitAction } from './kit-session.js';
import { fail, print } from './output.js';

/** `customers token|cards`: a customer's token for trying the API by hand, and their saved cards. */
export function addCustomers(program: Command): void {
  const customers = program
    .command('customers')
    .description("customers' saved cards, by the shop's own customer id (merchant_customer_id)");

  customers
    .command('token <customer_id>')
    .description(
      "a customer's token (an hour), as POST /customers/{id}/tokens makes it: for trying the API by hand",
    )
    .action(
      kitAction(async (kit, customerId: string) => {
        const problem = customerIdProblem(customerId);
        if (problem) return fail(`<customer_id>: ${problem}`);
        const c = kit.config;
        const { token, expiresAt } = new CustomerTokens(c.encryptionKey, c.previousEncryptionKeys).issue(
          customerId,
          // A token: its hour counts on the kit's clock, so a guess is worth saying.
          (await kit.clock((line) => console.error(line))).now(),
        );
        print({ customer_id: customerId, customer_token: token, expires_at: expiresAt.toISOString() });
      }),
    );

  customers
    .command('cards <customer_id>')
    .description(
      "the customer's active saved cards as the kit last knew them (JSON); never a number or a token",
    )
    .action(
      kitAction(async (kit, customerId: string) => {
        const cards = await (await kit.store()).savedCards.list(customerId);
        const now = (await kit.clock()).now();
        const { savedCardView } = await import('../merchant/http/saved-cards.js');
        print(cards.map((card) => savedCardView(card, now)));
      }),
    );
}
