import type { Clock } from '../../shared/clock.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { Models } from './models.js';

const AAD = 'webhook-secret';

/** The webhook signing secrets, sealed under APP_ENCRYPTION_KEY: never stored or handed out in clear but here. */
export class SecretStore {
  constructor(
    private readonly models: Models,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** Stores a secret under `label`; `replacing` retires the active ones of that label first. */
  async put(secret: string, label: string, replacing = true): Promise<void> {
    const now = new Date(this.clock.now());
    if (replacing)
      await this.models.Secret.update({ active: false, retired_at: now }, { where: { label, active: true } });
    await this.models.Secret.create({
      secret_sealed: this.box.seal(secret, AAD),
      label,
      created_at: now,
      retired_at: null,
    });
  }

  /** Every secret a signature may be made with: the stored active ones, newest first, and the operator's extra ones. */
  async active(extra: readonly string[] = []): Promise<string[]> {
    const rows = await this.models.Secret.findAll({ where: { active: true }, order: [['id', 'DESC']] });
    return [...rows.map((r) => this.box.open(r.secret_sealed, AAD)), ...extra];
  }

  /** Whether an active secret of this label is stored. */
  async has(label: string): Promise<boolean> {
    return (await this.models.Secret.count({ where: { label, active: true } })) > 0;
  }
}
