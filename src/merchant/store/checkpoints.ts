import type { Clock } from '../../shared/clock.js';
import type { Models } from './models.js';

/** Named positions background jobs resume from (recovery: the gateway time it has stored up to). */
export class CheckpointStore {
  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
  ) {}

  async get(name: string): Promise<string | null> {
    return (await this.models.Checkpoint.findByPk(name))?.value ?? null;
  }

  async put(name: string, value: string): Promise<void> {
    await this.models.Checkpoint.upsert({ name, value, updated_at: new Date(this.clock.now()) });
  }
}
