import { cliActor, systemUser } from '../input.js';
import type { KitSession } from '../kit-session.js';

/** `keys discard-lost` (registered in ../keys.ts). */
export async function discardLost(kit: KitSession, options: { yes?: boolean; by?: string }) {
  const actor = cliActor(options.by, systemUser);
  // Not the start-up's check of the key: what no key opens is what this command is for.
  const store = await kit.store({ keyCheck: false });
  const cards = await store.savedCards.unopened();
  if (options.yes !== true) {
    const secrets = await store.secrets.unopened();
    console.log(
      `${secrets} webhook secret(s) in use and ${cards.length} active saved card(s) do not open under the keys given; --yes discards them`,
    );
    const keys = (await store.orderRequests.unopened()).length;
    if (keys > 0)
      console.log(
        `${keys} Idempotency-Key(s) of POST /orders keep a client secret that does not open; --yes forgets them (a retry with one makes a new order)`,
      );
    const merchants = await store.merchantKeys.unopened();
    if (merchants.length > 0)
      console.log(
        `the stored gateway key(s) of merchant(s) ${merchants.join(', ')} do not open; --yes deletes them`,
      );
    return;
  }
  const secrets = await store.secrets.discardUnopened();
  for (const card of cards) await store.savedCards.revoke(card.customerId, card.id, { actor });
  const keys = await store.orderRequests.discardUnopened();
  const merchants = await store.merchantKeys.discardUnopened();
  console.log(
    `discarded ${secrets} webhook secret(s), revoked ${cards.length} saved card(s), forgot ${keys} Idempotency-Key(s) of POST /orders`,
  );
  if (merchants.length > 0)
    console.log(
      `deleted the stored gateway key(s) of merchant(s) ${merchants.join(', ')}: \`npm run cli -- merchant-key set --merchant <id>\` stores each again`,
    );
  if (secrets > 0)
    console.log(
      'the gateway still signs with a discarded secret: `npm run cli -- webhook rotate` gets a new one',
    );
}
