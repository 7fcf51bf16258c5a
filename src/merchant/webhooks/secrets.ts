import type { Models } from '../../infra/models.js';
import type { SecretBox } from '../../shared/secret-box.js';

const AAD = 'webhook-secret';

/** Stores a signing secret sealed under APP_ENCRYPTION_KEY; `replacing` retires the active ones of that label. */
export async function storeSecret(
  models: Models,
  box: SecretBox,
  secret: string,
  label: string,
  now: Date,
  replacing = true,
) {
  if (replacing)
    await models.Secret.update({ active: false, retired_at: now }, { where: { label, active: true } });
  await models.Secret.create({
    secret_sealed: box.seal(secret, AAD),
    label,
    created_at: now,
    retired_at: null,
  });
}

/** Every secret a signature may be made with: the stored active ones and the operator's extra ones. */
export async function activeSecrets(
  models: Models,
  box: SecretBox,
  extra: readonly string[],
): Promise<string[]> {
  const rows = await models.Secret.findAll({ where: { active: true }, order: [['id', 'DESC']] });
  return [...rows.map((r) => box.open(r.secret_sealed, AAD)), ...extra];
}

/** Whether an active secret of this label is stored. */
export async function hasSecret(models: Models, label: string): Promise<boolean> {
  return (await models.Secret.count({ where: { label, active: true } })) > 0;
}
