/**
 * Reading and writing a memory file's text in PostgreSQL (migrations/pg/040_memory_files.sql):
 * its row in `memory_files` and the lines appended since (`memory_appends`), read together
 * through the view `memory_texts`. Shared by PgMemoryFiles and PgMemoryVersions.
 */
import type { Sql } from '../../storage/pg/database.js';

export const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

export const utf8 = (body: Buffer | null | undefined): string | undefined => (body ? body.toString('utf8') : undefined);

/** Inside a transaction: holds the file's row (FOR UPDATE) and returns its whole text as kept; undefined when there is none. */
export async function heldText(sql: Sql, scope: string, name: string): Promise<string | undefined> {
  const held = await sql.query('SELECT 1 FROM memory_files WHERE scope = $1 AND name = $2 FOR UPDATE', [scope, name]);
  if (held.rowCount === 0) return undefined;
  // A statement after the lock: it sees every append committed before the lock was granted.
  const { rows } = await sql.query<{ body: Buffer }>('SELECT body FROM memory_texts WHERE scope = $1 AND name = $2', [scope, name]);
  return rows[0]!.body.toString('utf8');
}

/** Inside the transaction holding the file's row: its whole text written, its appended lines folded into it. */
export async function writeText(sql: Sql, scope: string, name: string, text: string): Promise<void> {
  await sql.query('UPDATE memory_files SET body = $3, updated_at = now() WHERE scope = $1 AND name = $2', [scope, name, bytes(text)]);
  await sql.query('DELETE FROM memory_appends WHERE scope = $1 AND name = $2', [scope, name]);
}
