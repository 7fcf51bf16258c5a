import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { randomHex, randomId, randomUuid } from '../../shared/ids.js';
import type { GatewayDeps } from '../deps.js';
import { testCard } from '../domain/cards.js';
import { amountRefusal, cardRefusal } from '../domain/payment-checks.js';
import { type Verification, verificationView } from '../domain/three-ds.js';
import { requireMerchantKey } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { declined, refused } from '../http/errors.js';
import {
  amountField,
  cardFacts,
  cardSchema,
  currencyField,
  httpUrl,
  withMinorAmount,
} from '../http/schemas.js';
import { parseOr422 } from '../http/validate.js';

export const verifySchema = z
  .object({ amount: amountField, currency: currencyField, card: cardSchema, auth_url: httpUrl })
  .transform(withMinorAmount);

const THREE_DS_MESSAGES = {
  ERR_3DS_TECHNICAL_ERROR: 'A technical error occurred during 3D Secure authentication.',
  ERR_3DS_NOT_ENROLLED: 'The card is not enrolled in 3D Secure.',
  ERR_3DS_NOT_SUPPORTED: 'The card does not participate in 3D Secure.',
} as const;

function challengeUrl(baseUrl: string, v: Verification): string | null {
  return v.authType === 'challenge' ? `${baseUrl}/hosted/3ds/${v.publicId}` : null;
}

export function threeDsRoutes(router: Router, deps: GatewayDeps, baseUrlOf: (ctx: Context) => string): void {
  const { state, clock } = deps;

  router.post('/api/v1/3ds/verify', async (ctx) => {
    const { merchantId } = requireMerchantKey(ctx);
    const body = parseOr422(verifySchema, await readJsonObject(ctx));
    const currency = body.currency as Verification['currency'];
    const now = clock.now();
    const refusal =
      amountRefusal(state.merchants.get(merchantId)!.currencies, body.minor, currency) ??
      cardRefusal(cardFacts(body.card), now);
    if (refusal) throw refused(refusal);

    const scenario = testCard(body.card.number).threeDs;
    const authenticated = scenario.kind === 'frictionless';
    const v: Verification = {
      id: state.nextVerificationId(),
      publicId: randomId('tds_', deps.random),
      merchantId,
      cardFingerprint: state.fingerprint(body.card.number),
      amount: body.minor,
      currency,
      status: authenticated ? 'full_auth' : scenario.kind === 'challenge' ? 'pending' : 'failed',
      authType: scenario.kind === 'challenge' ? 'challenge' : 'frictionless',
      eci: authenticated ? scenario.eci : '',
      cavv: authenticated ? randomHex(deps.random, 20) : '',
      dsTransId: randomUuid(deps.random),
      authUrl: body.auth_url,
      createdAt: now,
      updatedAt: now,
    };
    state.saveVerification(v);
    const view = verificationView(v, now, challengeUrl(baseUrlOf(ctx), v));
    switch (scenario.kind) {
      case 'error':
        throw declined(scenario.code, THREE_DS_MESSAGES[scenario.code], view);
      case 'challenge':
        return respond(ctx, view, 'A challenge is required: redirect the cardholder to challenge_url.');
      case 'frictionless':
        return respond(ctx, view, 'Card verified (frictionless).');
      default:
        return scenario satisfies never;
    }
  });
}
