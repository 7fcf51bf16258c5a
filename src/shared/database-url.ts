/**
 * The database a `mysql://user:pass@host:port/name` URL names, or null when the name is not a plain
 * identifier (1 to 64 letters, digits or _): the kit creates it and names it in SQL, so nothing that
 * would need quoting. Pure.
 */
export function databaseNameIn(url: string): string | null {
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  } catch {
    return null;
  }
  return /^[A-Za-z0-9_]{1,64}$/.test(path) ? path : null;
}

export const DATABASE_NAME_RULE = 'the database name (the path) must be 1 to 64 letters, digits or _';
