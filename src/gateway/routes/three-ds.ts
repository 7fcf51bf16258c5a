import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { randomHex, randomId } from '../../shared/ids.js';
import type { GatewayDeps } from '../deps.js';
import { cardExpired, luhnValid, testCard } from '../domain/cards.js';
import { type Verification, verificationView } from '../domain/three-ds.js';
import { requireMerchantKey } from '../http/auth.js';
import { readJsonObject } from '../http/body.js';
import { respond } from '../http/envelope.js';
import { declined } from '../http/errors.js';
import {
  amountField,
  cardSchema,
  currencyField,
  httpUrl,
  overPlatformMaximum,
  withMinorAmount,
} from '../http/schemas.js';
import { parseOr422 } from '../http/validate.js';
import type { GatewayState } from '../state/gateway-state.js';

const verifySchema = z
  .object({ amount: amountField, currency: currencyField, card: cardSchema, auth_url: httpUrl })
  .transform(withMinorAmount);

const THREE_DS_MESSAGES = {
  ERR_3DS_TECHNICAL_ERROR: 'A technical error occurred during 3D Secure authentication.',
  ERR_3DS_NOT_ENROLLED: 'The card is not enrolled in 3D Secure.',
  ERR_3DS_NOT_SUPPORTED: 'The card does not participate in 3D Secure.',
} as const;

/** `tds_...` or the deprecated numeric id (gateway-api.md, Versioning rule 5), as number or digits. */
export function findVerification(state: GatewayState, id: string | number): Verification | undefined {
  const publicId = typeof id === 'number' || /^\d+$/.test(id) ? state.verificationIds.get(Number(id)) : id;
  return publicId === undefined ? undefined : state.verifications.get(publicId);
}

export function challengeUrl(baseUrl: string, v: Verification): string | null {
  return v.authType === 'challenge' ? `${baseUrl}/hosted/3ds/${v.publicId}` : null;
}

export function threeDsRoutes(router: Router, deps: GatewayDeps, baseUrlOf: (ctx: Context) => string): void {
  const { state, clock } = deps;

  router.post('/api/v1/3ds/verify', async (ctx) => {
    const { merchantId } = requireMerchantKey(ctx);
    const body = parseOr422(verifySchema, await readJsonObject(ctx));
    const currency = body.currency as Verification['currency'];
    const now = clock.now();
    if (!state.merchants.get(merchantId)!.currencies.includes(currency)) {
      throw declined('ERR_PAYMENT_METHOD_NOT_ENABLED', `${currency} is not enabled for this merchant.`);
    }
    if (overPlatformMaximum(body.minor, currency)) {
      throw declined('ERR_ADAPTER_INVALID_AMOUNT', 'The amount is above the maximum of 1,000,000.00.');
    }
    if (!luhnValid(body.card.number))
      throw declined('ERR_INVALID_ACCOUNT_NUMBER', 'The card number is not valid.');
    if (cardExpired(body.card.exp_month, body.card.exp_year, now))
      throw declined('ERR_EXPIRED_CARD', 'The card has expired.');

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
      dsTransId: randomUUID(),
      authUrl: body.auth_url,
      createdAt: now,
      updatedAt: now,
    };
    state.verifications.set(v.publicId, v);
    state.verificationIds.set(v.id, v.publicId);
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
