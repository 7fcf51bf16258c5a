import { Op, type WhereOptions } from 'sequelize';
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

/**
 * Whose signing secrets (issue 45, platform mode: each merchant's endpoint at the gateway signs with
 * its own). A kit of one merchant reads every stored secret, whatever merchant a row names (as before
 * platform mode). A kit of several reads a merchant's own rows, and the first merchant also the rows
 * that name none: those stored before, when the kit acted for one merchant only.
 */
export interface SecretOwner {
  /** Written on the rows stored for it; null: a kit of one merchant whose id is not known. */
  merchantId: number | null;
  reads: 'all' | 'own' | 'own-and-unnamed';
}

/** A kit of one merchant: every secret is its. */
export const ONE_MERCHANT: SecretOwner = { merchantId: null, reads: 'all' };

/**
 * The owner of merchant `id`'s secrets among the merchants `served` (GATEWAY_MERCHANTS, in order): in
 * a kit of one merchant (or of its key's own account), every secret; null: the first merchant.
 */
export function secretOwner(served: readonly number[], id: number | null): SecretOwner {
  if (served.length <= 1) return { merchantId: id ?? served[0] ?? null, reads: 'all' };
  const merchantId = id ?? served[0]!;
  return { merchantId, reads: merchantId === served[0] ? 'own-and-unnamed' : 'own' };
}

/** The rows of `owner`'s secrets. */
function ownedBy(owner: SecretOwner): WhereOptions {
  switch (owner.reads) {
    case 'all':
      return {};
    case 'own':
      return { merchant_id: owner.merchantId };
    case 'own-and-unnamed':
      return { [Op.or]: [{ merchant_id: owner.merchantId }, { merchant_id: null }] };
    default:
      return owner.reads satisfies never;
  }
}

/** The webhook signing secrets, sealed under APP_ENCRYPTION_KEY: never stored or handed out in clear but here. */
export class SecretStore {
  constructor(
    private readonly models: Models,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /**
   * Stores `owner`'s secret under `label`; `replacing` retires `owner`'s active ones of that label
   * first (a rotation of one merchant's endpoint leaves the others' secrets as they are).
   */
  async put(
    secret: string,
    label: string,
    replacing = true,
    owner: SecretOwner = ONE_MERCHANT,
  ): Promise<void> {
    const now = new Date(this.clock.now());
    if (replacing)
      await this.models.Secret.update(
        { active: false, retired_at: now },
        { where: { [Op.and]: [{ label, active: true }, ownedBy(owner)] } },
      );
    await this.models.Secret.create({
      secret_sealed: this.box.seal(secret, AAD),
      label,
      merchant_id: owner.merchantId,
      created_at: now,
      retired_at: null,
    });
  }

  /**
   * Every secret a signature for `owner` may be made with: its stored active ones, newest first, those
   * retired within the grace, and the operator's extra ones.
   */
  async active(extra: readonly string[] = [], owner: SecretOwner = ONE_MERCHANT): Promise<string[]> {
    const rows = await this.#inUse(owner);
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

  /** `owner`'s active secrets, newest first, then those retired within the grace. */
  #inUse(owner: SecretOwner = ONE_MERCHANT) {
    const graceStart = new Date(this.clock.now() - RETIRED_SECRET_GRACE_MS);
    return this.models.Secret.findAll({
      where: {
        [Op.and]: [{ [Op.or]: [{ active: true }, { retired_at: { [Op.gt]: graceStart } }] }, ownedBy(owner)],
      },
      order: [
        ['active', 'DESC'],
        ['id', 'DESC'],
      ],
    });
  }

  /** How many of `owner`'s secrets are active, and how many retired ones are still in their grace. */
  async counts(owner: SecretOwner = ONE_MERCHANT): Promise<{ active: number; inGrace: number }> {
    const graceStart = new Date(this.clock.now() - RETIRED_SECRET_GRACE_MS);
    const active = await this.models.Secret.count({
      where: { [Op.and]: [{ active: true }, ownedBy(owner)] },
    });
    const inGrace = await this.models.Secret.count({
      where: { [Op.and]: [{ active: false, retired_at: { [Op.gt]: graceStart } }, ownedBy(owner)] },
    });
    return { active, inGrace };
  }

  /** Whether an active secret of this label is stored for `owner`. */
  async has(label: string, owner: SecretOwner = ONE_MERCHANT): Promise<boolean> {
    return (
      (await this.models.Secret.count({ where: { [Op.and]: [{ label, active: true }, ownedBy(owner)] } })) > 0
    );
  }
}
