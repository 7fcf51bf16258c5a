import { Op } from 'sequelize';
import type { Clock } from '../../shared/clock.js';
import { NotSealedHere, type SecretBox } from '../../shared/secret-box.js';
import { DEFAULT_TOLERANCE_SECONDS } from '../../shared/signature.js';
import type { Models } from './models.js';
import { type Resealed, resealColumn } from './reseal.js';

const AAD = 'webhook-secret';

/**
 * How long a secret replaced by a rotation is still accepted: the gateway signs nothing with it
 * after the rotation (gateway-api.md, rule 7), but a delivery signed just before may still be on its
 * way, and its signature stays fresh this long (sandbox.md section 8).
 */
export const RETIRED_SECRET_GRACE_MS = DEFAULT_TOLERANCE_SECONDS * 1000;

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

  /**
   * Every secret a signature may be made with: the stored active ones, newest first, those retired
   * within the grace, and the operator's extra ones.
   */
  async active(extra: readonly string[] = []): Promise<string[]> {
    const rows = await this.#inUse();
    return [
      ...rows.map((r) => {
        try {
          return this.box.open(r.secret_sealed, AAD);
        } catch (error) {
          if (!(error instanceof NotSealedHere)) throw error;
          throw new NotSealedHere(
            `webhook secret ${r.id} does not open under APP_ENCRYPTION_KEY (${error.message})`,
          );
        }
      }),
      ...extra,
    ];
  }

  /** How many of the secrets `active()` opens none of the box's keys opens (start-up's key check). */
  async unopened(): Promise<number> {
    const rows = await this.#inUse();
    return rows.filter((r) => !this.box.opens(r.secret_sealed, AAD)).length;
  }

  /** Seals every stored secret a previous key sealed again under the current one (key rotation). */
  reseal(): Promise<Resealed> {
    return resealColumn(this.models.Secret, 'secret_sealed', () => AAD, this.box);
  }

  /** Deletes the stored secrets no key opens (their key lost): worth nothing, they only stop the receiver. */
  async discardUnopened(): Promise<number> {
    const { unopened } = await this.reseal();
    if (unopened.length === 0) return 0;
    return this.models.Secret.destroy({ where: { id: unopened as number[] } });
  }

  /** The active secrets, newest first, then those retired within the grace. */
  #inUse() {
    const graceStart = new Date(this.clock.now() - RETIRED_SECRET_GRACE_MS);
    return this.models.Secret.findAll({
      where: { [Op.or]: [{ active: true }, { retired_at: { [Op.gt]: graceStart } }] },
      order: [
        ['active', 'DESC'],
        ['id', 'DESC'],
      ],
    });
  }

  /** How many secrets are active, and how many retired ones are still in their grace. */
  async counts(): Promise<{ active: number; inGrace: number }> {
    const graceStart = new Date(this.clock.now() - RETIRED_SECRET_GRACE_MS);
    const active = await this.models.Secret.count({ where: { active: true } });
    const inGrace = await this.models.Secret.count({
      where: { active: false, retired_at: { [Op.gt]: graceStart } },
    });
    return { active, inGrace };
  }

  /** Whether an active secret of this label is stored. */
  async has(label: string): Promise<boolean> {
    return (await this.models.Secret.count({ where: { label, active: true } })) > 0;
  }
}
