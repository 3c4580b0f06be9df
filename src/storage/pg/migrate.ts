/**
 * The PostgreSQL schema, versioned: ordered SQL files in migrations/pg/ at the repository's root
 * (`001_name.sql`, `002_name.sql`, …; each store adds its own), applied at start by `migrate`.
 * The folder sits three levels above this file both in src/storage/pg/ (tsx) and in
 * dist/storage/pg/ (the build), so both find it.
 *
 * - Each file runs in its own transaction and is recorded in `schema_migrations` (version,
 *   name, checksum, applied_at) in that same transaction: a file is applied whole or not at all.
 * - Every step holds one transaction-level advisory lock, so processes starting together apply
 *   each file once: the others wait, then find it recorded.
 * - A file changed after it was applied (its checksum differs) stops the start with one line
 *   (`database.migration_changed`): what ran is not what the file says any more.
 * - A database newer than this program (versions it has no file for) is accepted: migrations
 *   only add — tables, columns with defaults, indexes — so an older release still runs on a
 *   newer schema (rolled back after an update, or beside a newer process). Removing or renaming
 *   comes in a later release, once no running version reads what goes (docs/postgres.md).
 *   A file that holds the line `-- older versions stop` is the exception (recorded as
 *   `stops_older`): a program without it stops with one line (`database.too_new`) instead of
 *   running on a schema it would misread (docs/cluster.md, "Upgrading").
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError, errorMessage } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { Database, Sql } from './database.js';
import { DbError } from './errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** migrations/pg/ of this checkout. */
export const MIGRATIONS_DIR = path.join(ROOT, 'migrations', 'pg');

/** Every migration step takes this lock (pg_advisory_xact_lock: released at the step's COMMIT or ROLLBACK). */
const LOCK_KEY = '7883230862291322'; // "membot" migrations; any constant no other code uses

const FILE_NAME = /^(\d+)_([a-z0-9_]+)\.sql$/;

/** The line that marks a migration older programs cannot run beside. */
const STOPS_OLDER = /^-- older versions stop\s*$/m;

export interface Migration {
  version: number;
  /** The file's name: `002_sessions.sql`. */
  name: string;
  sql: string;
  /** sha256 of the text with line ends made \n (a checkout with CRLF is not a changed file). */
  checksum: string;
}

export interface MigrateResult {
  /** The files applied by this call, in order (empty when another process had applied them). */
  applied: string[];
  /** Files the database records that this program has none for: it is newer. */
  newer: string[];
}

/** The migrations of `dir`, by version. A .sql file named otherwise, or two of one version, is a bug of the checkout. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const out: Migration[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.sql')) continue;
    const m = FILE_NAME.exec(name);
    if (!m) throw new AppError('internal.bug', { problem: `${shown(dir, name)} is not named like 001_what_it_adds.sql` });
    const version = Number(m[1]);
    if (out.some((x) => x.version === version)) throw new AppError('internal.bug', { problem: `two migrations in ${dir} have the version ${version}` });
    const sql = readFileSync(path.join(dir, name), 'utf8');
    out.push({ version, name, sql, checksum: checksum(sql) });
  }
  return out.sort((a, b) => a.version - b.version);
}

/**
 * Brings the database's schema up to this program's migrations (`dir`: migrations/pg/). Waits
 * out an unreachable database like every call of `db`; throws `database.migration_changed` for
 * a file edited after it was applied, and `database.rejected` (naming the file) for SQL the
 * database refuses, in which case nothing of that file is applied.
 */
export async function migrate(db: Database, opts: { log: Logger; dir?: string }): Promise<MigrateResult> {
  const dir = opts.dir ?? MIGRATIONS_DIR;
  const files = readMigrations(dir);
  const recorded = await db.tx(async (sql) => {
    await lock(sql);
    await sql.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    await sql.query('ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS stops_older boolean NOT NULL DEFAULT false');
    return (
      await sql.query<{ version: number; name: string; checksum: string; stops_older: boolean }>(
        'SELECT version, name, checksum, stops_older FROM schema_migrations ORDER BY version',
      )
    ).rows;
  });
  for (const f of files) {
    const r = recorded.find((x) => x.version === f.version);
    if (r) sameAsApplied(db, dir, f, r.checksum);
  }
  const newerRows = recorded.filter((r) => !files.some((f) => f.version === r.version));
  const stops = newerRows.find((r) => r.stops_older);
  if (stops) throw new AppError('database.too_new', { migration: stops.name, where: db.where });
  const newer = newerRows.map((r) => r.name);
  if (newer.length > 0) {
    opts.log.info(
      { newer },
      `the database has migrations this program does not have (${newer.join(', ')}): a newer version of the bot set it up; going on, as migrations only add`,
    );
  }

  const applied: string[] = [];
  for (const f of files) {
    if (recorded.some((r) => r.version === f.version)) continue;
    const done = await db.tx(async (sql) => {
      await lock(sql);
      // Another process may have applied it since the first look: the lock makes this answer final.
      const { rows } = await sql.query<{ checksum: string }>('SELECT checksum FROM schema_migrations WHERE version = $1', [f.version]);
      if (rows[0]) {
        sameAsApplied(db, dir, f, rows[0].checksum);
        return false;
      }
      try {
        await sql.query(f.sql);
      } catch (err) {
        if (err instanceof DbError && err.kind === 'rejected')
          throw new DbError('rejected', db.where, `${shown(dir, f.name)}: ${errorMessage(err.cause)}`, err.sqlState, err);
        throw err;
      }
      await sql.query('INSERT INTO schema_migrations (version, name, checksum, stops_older) VALUES ($1, $2, $3, $4)', [
        f.version,
        f.name,
        f.checksum,
        STOPS_OLDER.test(f.sql),
      ]);
      return true;
    });
    if (done) {
      applied.push(f.name);
      opts.log.info({ migration: f.name }, `applied migration ${f.name}`);
    }
  }
  return { applied, newer };
}

function lock(sql: Sql): Promise<unknown> {
  return sql.query('SELECT pg_advisory_xact_lock($1::bigint)', [LOCK_KEY]);
}

function sameAsApplied(db: Database, dir: string, f: Migration, applied: string): void {
  if (applied !== f.checksum) throw new AppError('database.migration_changed', { file: shown(dir, f.name), where: db.where });
}

function checksum(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex');
}

/** A migration's path as the owner knows it: from the repository's root when inside it. */
function shown(dir: string, name: string): string {
  const rel = path.relative(ROOT, path.join(dir, name));
  return rel.startsWith('..') || path.isAbsolute(rel) ? path.join(dir, name) : rel;
}
