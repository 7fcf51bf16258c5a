import { type Model, type ModelStatic, Op, type WhereOptions } from 'sequelize';
import { NotSealedHere, type SecretBox } from '../../shared/secret-box.js';

/** What a pass over one sealed column found: values sealed again under the current key, and the rows no key opens. */
export interface Resealed {
  resealed: number;
  unopened: (string | number)[];
}

const PAGE = 500;

/**
 * Seals again under the box's current key every value of `column` (of the rows `where` picks) that a
 * previous key sealed (key rotation), a page of rows at a time by primary key; names the rows no key
 * opens (`write: false`: only names them). Each row is updated only if it still holds what was read,
 * so two processes starting together, or a change made meanwhile, lose nothing.
 */
export async function resealColumn(
  model: ModelStatic<Model>,
  column: string,
  aadOf: (id: string | number, row: Model) => string,
  box: SecretBox,
  {
    where = {},
    write = true,
    read = [],
  }: {
    where?: WhereOptions;
    write?: boolean;
    /** Other columns the AAD is made of (`aadOf` reads them from the row). */
    read?: readonly string[];
  } = {},
): Promise<Resealed> {
  const key = model.primaryKeyAttribute;
  const found: Resealed = { resealed: 0, unopened: [] };
  let after: string | number | null = null;
  for (;;) {
    const rows: Model[] = await model.findAll({
      attributes: [key, column, ...read],
      where: after === null ? where : { [Op.and]: [where, { [key]: { [Op.gt]: after } }] },
      order: [[key, 'ASC']],
      limit: PAGE,
    });
    for (const row of rows) {
      const id = row.get(key) as string | number;
      const sealed = row.get(column) as string;
      let next: string | null;
      try {
        next = box.resealed(sealed, aadOf(id, row));
      } catch (error) {
        if (!(error instanceof NotSealedHere)) throw error;
        found.unopened.push(id);
        continue;
      }
      if (next === null || !write) continue;
      const [changed] = await model.update({ [column]: next }, { where: { [key]: id, [column]: sealed } });
      found.resealed += changed;
    }
    if (rows.length < PAGE) return found;
    after = rows.at(-1)!.get(key) as string | number;
  }
}
