import { z } from 'zod';

/*
 * GATEWAY_MERCHANTS and GATEWAY_MERCHANT_KEYS, read: no environment here (config.ts reads it); in a
 * module of its own, as order-ttl.ts. Platform mode (issue 45): a partner key acts for the linked
 * merchants listed here; each may have its own merchant key for what partners may not do.
 */

const merchantId = /^[1-9]\d{0,9}$/;

/** `1001,1002`: the merchants the kit acts for, each once. */
export const merchantsSetting = z.string().transform((v, ctx): number[] => {
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = items.find((s) => !merchantId.test(s));
  if (bad !== undefined || items.length === 0) {
    ctx.addIssue({
      code: 'custom',
      message: `must be comma-separated merchant ids (integers)${bad === undefined ? '' : `, not "${bad}"`}`,
    });
    return z.NEVER;
  }
  const ids = items.map(Number);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) {
    ctx.addIssue({ code: 'custom', message: `names merchant ${twice} twice` });
    return z.NEVER;
  }
  return ids;
});

/**
 * `1001=sk_...,1002=sk_...`: a merchant's own key, beside the partner key, for 3D Secure, capture,
 * refund and void (gateway-api.md: merchant keys only). The text of a key never appears in a message.
 */
export const merchantKeysSetting = z.string().transform((v, ctx): Map<number, string> => {
  const keys = new Map<number, string>();
  for (const item of v.split(',').map((s) => s.trim())) {
    if (item === '') continue;
    const at = item.indexOf('=');
    const id = at < 0 ? '' : item.slice(0, at).trim();
    const key = at < 0 ? '' : item.slice(at + 1).trim();
    if (!merchantId.test(id) || key.length < 8) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be comma-separated merchant_id=key pairs (a key of 8 characters or more)',
      });
      return z.NEVER;
    }
    if (keys.has(Number(id))) {
      ctx.addIssue({ code: 'custom', message: `gives merchant ${id} two keys` });
      return z.NEVER;
    }
    keys.set(Number(id), key);
  }
  return keys;
});

/** The merchants the settings name: GATEWAY_MERCHANTS, or the one GATEWAY_MERCHANT_ID names (its older form). */
export function configuredMerchants(merchants: number[] | undefined, one: number | undefined): number[] {
  return merchants ?? (one === undefined ? [] : [one]);
}

/** GATEWAY_WEBHOOK_SECRETS, read: the secrets that name no merchant, and each merchant's. */
export interface WebhookSecretsSetting {
  plain: string[];
  byMerchant: Map<number, string[]>;
}

/**
 * `whsec_...,1004=whsec_...`: signing secrets accepted beside the stored ones (from an outside secret
 * store). A kit of one merchant takes them as they are; a kit of several (platform mode) needs each to
 * name its merchant, `merchant_id=secret`, since each merchant's endpoint signs with its own (the
 * receiver verifies a merchant's deliveries with that merchant's secrets only). A secret's text never
 * appears in a message.
 */
export const webhookSecretsSetting = z.string().transform((v, ctx): WebhookSecretsSetting => {
  const out: WebhookSecretsSetting = { plain: [], byMerchant: new Map() };
  for (const item of v.split(',').map((s) => s.trim())) {
    if (item === '') continue;
    const named = /^(\d+)=(.*)$/.exec(item);
    const secret = named ? named[2]!.trim() : item;
    if ((named && !merchantId.test(named[1]!)) || secret.length < 16) {
      ctx.addIssue({
        code: 'custom',
        message:
          'must be comma-separated signing secrets of 16 characters or more, each alone or as merchant_id=secret',
      });
      return z.NEVER;
    }
    if (!named) out.plain.push(secret);
    else {
      const id = Number(named[1]);
      out.byMerchant.set(id, [...(out.byMerchant.get(id) ?? []), secret]);
    }
  }
  return out;
});

/**
 * The GATEWAY_WEBHOOK_SECRETS secrets a merchant's deliveries are verified with: in a kit of one
 * merchant every one of them (a problem of the settings says when one names another merchant); in a
 * kit of several, those naming `id` (null: the first merchant).
 */
export function extraSecretsOf(
  setting: {
    merchants: readonly number[];
    extraWebhookSecrets: readonly string[];
    merchantWebhookSecrets: ReadonlyMap<number, readonly string[]>;
  },
  id: number | null,
): string[] {
  if (setting.merchants.length <= 1)
    return [...setting.extraWebhookSecrets, ...[...setting.merchantWebhookSecrets.values()].flat()];
  return [...(setting.merchantWebhookSecrets.get(id ?? setting.merchants[0]!) ?? [])];
}
