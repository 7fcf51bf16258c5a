import type { Command } from 'commander';
import { CustomerTokens } from '../merchant/customers/customer-token.js';
import { customerIdProblem } from '../merchant/customers/saved-card.js';
import { CLI_CREDENTIAL, cliActor, systemUser } from './input.js';
import { kitAction } from './kit-session.js';
import { fail, print } from './output.js';

/**
 * `customers token|cards|erase`: a customer's token for trying the API by hand, their saved cards, and
 * forgetting them (issue 43).
 */
export function addCustomers(program: Command): void {
  const customers = program
    .command('customers')
    .description("customers' saved cards, by the shop's own customer id (merchant_customer_id)");

  customers
    .command('token <customer_id>')
    .description(
      "a customer's token (an hour), as POST /customers/{id}/tokens makes it: for trying the API by hand",
    )
    .option('--order <order_id>', "a token that also pays this order of the customer's with a saved card")
    .action(
      kitAction(async (kit, customerId: string, o: { order?: string }) => {
        const problem = customerIdProblem(customerId);
        if (problem) return fail(`<customer_id>: ${problem}`);
        const store = o.order === undefined ? null : await kit.store();
        const order = store && o.order !== undefined ? await store.orders.find(o.order) : null;
        if (o.order !== undefined && order?.customer?.merchant_customer_id !== customerId)
          return fail(
            `--order: ${order ? "names another customer's order, or one that names none" : 'no such order'}`,
          );
        const c = kit.config;
        const { token, expiresAt } = new CustomerTokens(c.encryptionKey, c.previousEncryptionKeys).issue(
          customerId,
          // A token: its hour counts on the kit's clock, so a guess is worth saying.
          (await kit.clock((line) => console.error(line))).now(),
          order ? { orderId: order.id, credential: CLI_CREDENTIAL } : undefined,
        );
        if (store && order)
          await store.audit.record({
            actor: cliActor(undefined, systemUser),
            action: 'customer.vouch',
            orderId: order.id,
            amountMinor: order.amount_minor,
            currency: order.currency,
            detail: `customer ${customerId}: lists cards and pays this order`,
          });
        print({
          customer_id: customerId,
          customer_token: token,
          expires_at: expiresAt.toISOString(),
          order_id: order?.id ?? null,
        });
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

  customers
    .command('erase <customer_id>')
    .description(
      'forget a customer, as POST /customers/{id}/erase does: their personal data on every order, in the kept webhook payloads and order events, their saved cards (revoked at the gateway); the money stays (JSON)',
    )
    .option('--by <name>', 'who asked for it, kept in the audit log (default: the system user)')
    .action(
      kitAction(async (kit, customerId: string, o: { by?: string }) => {
        const problem = customerIdProblem(customerId);
        if (problem) return fail(`<customer_id>: ${problem}`);
        const actor = cliActor(o.by, systemUser);
        const [{ adapters }, { eraseCustomer }, { erasureView }] = await Promise.all([
          kit.adapters(),
          import('../merchant/privacy/erase.js'),
          import('../merchant/http/saved-cards.js'),
        ]);
        print(erasureView(await eraseCustomer(adapters.checkout, customerId, actor, 'cli')));
      }),
    );
}
