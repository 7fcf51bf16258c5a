import { CustomerTokens } from '../../merchant/customers/customer-token.js';
import { customerIdProblem } from '../../merchant/customers/saved-card.js';
import {
  customersOf,
  merchantOf,
  orderMerchant,
  signedMerchant,
} from '../../merchant/orders/order-merchant.js';
import { CLI_CREDENTIAL, cliActor, systemUser } from '../input.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';

/** `customers token|cards|erase` (registered in ../customers.ts). */

export async function token(kit: KitSession, customerId: string, o: { order?: string; merchant?: string }) {
  const problem = customerIdProblem(customerId);
  if (problem) return fail(`<customer_id>: ${problem}`);
  const store = o.order === undefined ? null : await kit.store();
  const order = store && o.order !== undefined ? await store.orders.find(o.order) : null;
  if (o.order !== undefined && order?.customer?.merchant_customer_id !== customerId)
    return fail(
      `--order: ${order ? "names another customer's order, or one that names none" : 'no such order'}`,
    );
  const served = kit.config.gateway.merchants;
  // A token for an order is its merchant's customer's; else the merchant named (platform mode).
  const merchantId = order ? merchantOf(order.merchant_id, served) : merchantOption(kit, o.merchant);
  if (order && o.merchant !== undefined && merchantOption(kit, o.merchant) !== merchantId)
    return fail(`--merchant: must be the order's merchant (${merchantId}) or left out`);
  const c = kit.config;
  const { token, expiresAt } = new CustomerTokens(c.encryptionKey, c.previousEncryptionKeys).issue(
    customerId,
    // A token: its hour counts on the kit's clock, so a guess is worth saying.
    (await kit.clock((line) => console.error(line))).now(),
    order ? { orderId: order.id, credential: CLI_CREDENTIAL } : undefined,
    signedMerchant(merchantId, served),
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

export async function cards(kit: KitSession, customerId: string, o: { merchant?: string } = {}) {
  const merchantId = merchantOption(kit, o.merchant);
  const served = kit.config.gateway.merchants;
  const saved = await (await kit.store()).savedCards.list(customerId, customersOf(merchantId, served));
  const now = (await kit.clock()).now();
  const { savedCardView } = await import('../../merchant/http/saved-cards.js');
  print(saved.map((card) => savedCardView(card, now)));
}

export async function erase(kit: KitSession, customerId: string, o: { merchant?: string; by?: string }) {
  const problem = customerIdProblem(customerId);
  if (problem) return fail(`<customer_id>: ${problem}`);
  const merchantId = merchantOption(kit, o.merchant);
  const actor = cliActor(o.by, systemUser);
  const [{ adapters }, { eraseCustomer }, { erasureView }] = await Promise.all([
    kit.adapters(),
    import('../../merchant/privacy/erase.js'),
    import('../../merchant/http/saved-cards.js'),
  ]);
  print(erasureView(await eraseCustomer(adapters.checkout, customerId, actor, 'cli', merchantId)));
}

/**
 * `--merchant` (platform mode): whose customer, among GATEWAY_MERCHANTS; required when it lists
 * several, else the one it lists. Fails the command with the option's problem.
 */
function merchantOption(kit: KitSession, text: string | undefined): number | null {
  if (text !== undefined && !/^[1-9]\d{0,9}$/.test(text)) return fail('--merchant: must be a merchant id');
  const chosen = orderMerchant(kit.config.gateway.merchants, text === undefined ? undefined : Number(text));
  return 'problem' in chosen ? fail(`--merchant: ${chosen.problem}`) : chosen.merchantId;
}
