import { type Sequelize, UniqueConstraintError } from 'sequelize';
import { transaction } from '../../infra/database.js';
import type { Clock } from '../../shared/clock.js';
import { type RandomSource, randomId } from '../../shared/ids.js';
import type { Actor, OperatorRole } from '../operators/roles.js';
import { looksLikeOperatorToken, newOperatorToken, sameHash, tokenHash } from '../operators/tokens.js';
import type { AuditStore } from './audit.js';
import { type Models, type OperatorRow, plain } from './models.js';
import type { OperatorRecord } from './records.js';

/** `cli operator add` for a name that has a live token already. */
export class OperatorExists extends Error {
  override name = 'OperatorExists';
}

/**
 * Named operators' tokens (issue, part 2). A token is made here, shown once to the caller and never
 * again: only its SHA-256 is stored. Every request with one reads the row (one lookup by a unique
 * key), so a revoked token is refused at once by every process: no cache to outlive a revocation.
 */
export class OperatorStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly audit: AuditStore,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  /**
   * A new operator and their token (the only time it exists outside the caller's hands). `merchants`:
   * the merchants it is scoped to (checked by the caller against those the kit serves); left out,
   * every merchant.
   */
  async add(input: {
    name: string;
    role: OperatorRole;
    merchants?: readonly number[] | null;
    by: Actor;
  }): Promise<{
    operator: OperatorRecord;
    token: string;
  }> {
    const token = newOperatorToken(this.random);
    try {
      const operator = await transaction(this.sequelize, async (tx) => {
        const row = await this.models.Operator.create(
          {
            id: randomId('opr_', this.random),
            name: input.name,
            role: input.role,
            merchant_ids: input.merchants ? input.merchants.join(',') : null,
            token_hash: tokenHash(token),
            active_name: input.name,
            created_at: new Date(this.clock.now()),
            created_by: input.by.name.slice(0, 64),
          },
          { transaction: tx },
        );
        await this.audit.record(
          {
            actor: input.by,
            action: 'operator.add',
            subjectId: row.id,
            detail: `${input.name} as ${input.role}${input.merchants ? ` for merchants ${input.merchants.join(', ')}` : ''}`,
          },
          tx,
        );
        return operatorRecord(row);
      });
      return { operator, token };
    } catch (error) {
      if (error instanceof UniqueConstraintError)
        throw new OperatorExists(`${input.name} has a live token already: revoke it first`);
      throw error;
    }
  }

  /** Newest first; the revoked too with `all`. */
  async list(o: { all?: boolean } = {}): Promise<OperatorRecord[]> {
    const rows = await this.models.Operator.findAll({
      where: o.all ? {} : { revoked_at: null },
      order: [
        ['created_at', 'DESC'],
        ['id', 'DESC'],
      ],
    });
    return rows.map(operatorRecord);
  }

  /**
   * Revokes the live token of a name (or of an id): refused from the next request on, everywhere.
   * Null: no live token has that name or id.
   */
  async revoke(nameOrId: string, by: Actor): Promise<OperatorRecord | null> {
    return transaction(this.sequelize, async (tx) => {
      const where = nameOrId.startsWith('opr_')
        ? { id: nameOrId, revoked_at: null }
        : { active_name: nameOrId };
      const row = await this.models.Operator.findOne({ where, transaction: tx, lock: tx.LOCK.UPDATE });
      if (!row) return null;
      await row.update(
        { revoked_at: new Date(this.clock.now()), revoked_by: by.name.slice(0, 64), active_name: null },
        { transaction: tx },
      );
      await this.audit.record(
        { actor: by, action: 'operator.revoke', subjectId: row.id, detail: `${row.name} (${row.role})` },
        tx,
      );
      return operatorRecord(row);
    });
  }

  /** The live operator a bearer token belongs to; null for anything else (revoked, unknown, malformed). */
  async byToken(token: string): Promise<OperatorRecord | null> {
    if (!looksLikeOperatorToken(token)) return null;
    const hash = tokenHash(token);
    const row = await this.models.Operator.findOne({ where: { token_hash: hash, revoked_at: null } });
    // The lookup is by the digest, which tells an attacker nothing of a token; compared again in
    // constant time all the same.
    return row && sameHash(row.token_hash, hash) ? operatorRecord(row) : null;
  }

  /** The live operator of an id (a signed-in session names one); null once revoked. */
  async activeById(id: string): Promise<OperatorRecord | null> {
    const row = await this.models.Operator.findOne({ where: { id, revoked_at: null } });
    return row && operatorRecord(row);
  }
}

/** A row as the record: its scope a list of merchant ids (null: every merchant). */
function operatorRecord(row: OperatorRow): OperatorRecord {
  const { merchant_ids, ...rest } = plain(row);
  return { ...rest, merchant_ids: merchant_ids === null ? null : merchant_ids.split(',').map(Number) };
}
