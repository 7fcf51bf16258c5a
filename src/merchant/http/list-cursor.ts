import type { ListPosition } from '../store/index.js';

/**
 * The order list's cursor: the last order of a page (its creation time and id), opaque to the caller.
 * Positions, not offsets: orders created while someone pages through the list neither repeat a row
 * nor skip one.
 */
export function encodeCursor(p: ListPosition): string {
  return Buffer.from(`${p.createdAt.getTime()}.${p.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names; null for anything this list did not give. */
export function decodeCursor(cursor: string): ListPosition | null {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^(\d{1,15})\.([A-Za-z0-9_]{1,32})$/.exec(text);
  if (!m) return null;
  const createdAt = new Date(Number(m[1]));
  return Number.isNaN(createdAt.getTime()) ? null : { createdAt, id: m[2]! };
}
