import type { Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import { MIGRATIONS } from '../../migrations/index.js';
import { MIGRATIONS_TABLE } from './database.js';

/**
 * The migrations (migrations/index.ts) under umzug. A module of its own: umzug loads its command
 * line's modules with it (a few hundred), which a process whose schema is current never needs
 * (infra/database.ts `migrate`).
 */
export function migrator(sequelize: Sequelize) {
  return new Umzug({
    migrations: MIGRATIONS.map((m) => ({ name: m.name, up: m.up, down: m.down })),
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: MIGRATIONS_TABLE }),
    logger: undefined,
  });
}
