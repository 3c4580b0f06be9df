/**
 * DATABASE_URL, read the way the settings check and the pool both need it: whether it is a
 * PostgreSQL URL at all, its password (a log secret), and a description of where it points
 * that is safe to print — host, port and database, never the user's password.
 */

/** What is wrong with `url` as a PostgreSQL URL (one line, without the value: it holds a password), or null. */
export function databaseUrlProblem(url: string): string | null {
  const u = parse(url);
  if (!u || (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')) {
    return 'DATABASE_URL is not a postgres:// URL — write it as postgres://user:password@host:5432/database, or remove it to keep the state in files';
  }
  if (!u.hostname && !u.searchParams.get('host')) {
    return 'DATABASE_URL names no host — write it as postgres://user:password@host:5432/database (a Unix socket: postgres:///database?host=/run/postgresql)';
  }
  return null;
}

/**
 * The forms the password of `url` may take in text (as written, percent-encoded, and decoded),
 * to register as log secrets; none when it has no password.
 */
export function databaseSecrets(url: string): string[] {
  const u = parse(url);
  if (!u?.password) return [];
  const out = [u.password];
  try {
    out.push(decodeURIComponent(u.password));
  } catch {
    // A stray % is sent as written; the raw form is already in the list.
  }
  return [...new Set(out)];
}

/** `host:port/database` (the socket folder for a Unix socket): for log lines and /status. */
export function describeDatabase(url: string): string {
  const u = parse(url);
  if (!u) return 'the database';
  const host = u.hostname || u.searchParams.get('host') || 'localhost';
  const db = decodeSafe(u.pathname.replace(/^\//, '')) || decodeSafe(u.username) || 'postgres';
  return `${host}:${u.port || '5432'}/${db}`;
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
