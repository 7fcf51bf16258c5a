import { CustomerTokens } from '../../merchant/customers/customer-token.js';
import { customerIdProblem } from '../../merchant/customers/saved-card.js';
import { CLI_CREDENTIAL, cliActor, systemUser } from '../input.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';

/** `customers token|cards|erase` (registered in ../customers.ts). */

export async function token(kit: KitSession, customerId: string, o: { order?: string }) {
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
}

export async function cards(kit: KitSession, customerId: string) {
  const saved = await (await kit.store()).savedCards.list(customerId);
  const now = (await kit.clock()).now();
  const { savedCardView } = await import('../../merchant/http/saved-cards.js');
  print(saved.map((card) => savedCardView(card, now)));
}

export async function erase(kit: KitSession, customerId: string, o: { by?: string }) {
  const problem = customerIdProblem(customerId);
  if (problem) return fail(`<customer_id>: ${problem}`);
  const actor = cliActor(o.by, systemUser);
  const [{ adapters }, { eraseCustomer }, { erasureView }] = await Promise.all([
    kit.adapters(),
    import('../../merchant/privacy/erase.js'),
    import('../../merchant/http/saved-cards.js'),
  ]);
  print(erasureView(await eraseCustomer(adapters.checkout, customerId, actor, 'cli')));
}
