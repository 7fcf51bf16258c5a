import type { QueryInterface } from 'sequelize';
import { maskVaultTokens } from '../src/shared/vault-tokens.js';

/**
 * The inbox keeps no vault token (issue 41, part 5): from now on the store masks them before a payload
 * is written; this masks those already stored. Only payloads that may hold one are read, a page at a
 * time, and a row is written again only when its text changes.
 */
export async function up({ context: q }: { context: QueryInterface }): Promise<void> {
  let after = '';
  for (;;) {
    const [rows] = (await q.sequelize.query(
      `SELECT event_id, payload FROM webhook_inbox
        WHERE event_id > ? AND (INSTR(payload, 'vault') > 0 OR INSTR(payload, 'vt_') > 0 OR INSTR(payload, ?) > 0)
        ORDER BY event_id LIMIT 500`,
      { replacements: [after, '\\'] },
    )) as [{ event_id: string; payload: string }[], unknown];
    for (const row of rows) {
      const masked = maskVaultTokens(row.payload);
      if (masked !== row.payload)
        await q.sequelize.query('UPDATE webhook_inbox SET payload = ? WHERE event_id = ?', {
          replacements: [masked, row.event_id],
        });
    }
    if (rows.length < 500) return;
    after = rows.at(-1)!.event_id;
  }
}

export async function down(): Promise<void> {
  throw new Error('2026-11-28-17-inbox-vault-tokens cannot be undone: the tokens it masked are gone');
}
