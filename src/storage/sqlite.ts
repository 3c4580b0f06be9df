/**
 * The one way the daemon opens its SQLite files (memory.db, schedules.db, usage.db), with one
 * policy for a damaged file: it is set aside as `<name>.corrupt-<time>` (with its -wal and
 * -shm, kept for inspection, never read again), the event is logged at error level with the
 * code `storage.corrupt`, and an empty file is started, so the daemon keeps running. /status
 * and `npm run doctor` list the copies set aside until the owner deletes them.
 *
 * Only damage is treated so: a file locked by another process, unreadable for its permissions,
 * or written by a newer program is not damaged, and the error goes to the caller untouched.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { AppError, errorMessage, isAppError, type ErrorCode } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { preparePrivateFileSync } from '../core/private.js';

export type Db = Database.Database;

export interface SqliteOptions {
  /** How long a statement waits for another connection's lock (ms). */
  busyTimeoutMs: number;
  /** FULL where a lost commit is a wrong answer (reminders: sent twice or never), NORMAL elsewhere. */
  synchronous: 'NORMAL' | 'FULL';
  /** Deleted rows overwritten with zeros (what "forget" needs where text is kept). */
  secureDelete?: boolean;
  /** Creates or upgrades the schema and probes the file; a damaged file makes it throw. */
  setup: (db: Db) => void;
  log: Logger;
  /** The time in the set-aside name (tests pass theirs). */
  now?: number;
}

export interface OpenedSqlite {
  db: Db;
  /** Set when the file was damaged: where its copy went. */
  setAside?: string;
}

const DAMAGE = ['SQLITE_CORRUPT', 'SQLITE_NOTADB'];

/** True for an error that says the file's content is damaged (not locked, not newer, not a bug). */
export function isDamage(err: unknown): boolean {
  if (isAppError(err, 'storage.corrupt')) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DAMAGE.some((d) => code === d || code.startsWith(`${d}_`));
}

/** Throws `storage.corrupt` unless SQLite's quick_check finds the file sound (for small files: it reads every page). */
export function quickCheck(db: Db, file: string): void {
  const check = db.pragma('quick_check', { simple: true });
  if (check !== 'ok') throw new AppError('storage.corrupt', { file: path.basename(file), problem: `quick_check: ${String(check)}` });
}

function openOnce(file: string, opts: SqliteOptions): Db {
  if (file !== ':memory:') {
    mkdirSync(path.dirname(file), { recursive: true });
    // Private before SQLite opens it: SQLite creates files 0644 by default and gives -wal and
    // -shm the mode of the database file, so a 0600 file keeps all three private.
    preparePrivateFileSync(file);
    preparePrivateFileSync(`${file}-wal`, false);
    preparePrivateFileSync(`${file}-shm`, false);
  }
  const db = new Database(file, { timeout: opts.busyTimeoutMs });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${opts.synchronous}`);
    if (opts.secureDelete) db.pragma('secure_delete = ON');
    opts.setup(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Opens `file` under the policy above; throws for anything but damage. */
export function openSqlite(file: string, opts: SqliteOptions): OpenedSqlite {
  try {
    return { db: openOnce(file, opts) };
  } catch (err) {
    if (file === ':memory:' || !isDamage(err)) throw err;
    const aside = setAsideName(file, opts.now ?? Date.now());
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
    opts.log.error(
      { code: 'storage.corrupt' satisfies ErrorCode, file: path.basename(file), movedTo: path.basename(aside), reason: errorMessage(err) },
      `${path.basename(file)} is damaged: set it aside as ${path.basename(aside)} and started an empty one (what it held is not used; the copy is kept for inspection)`,
    );
    return { db: openOnce(file, opts), setAside: aside };
  }
}

/** `memory.db.corrupt-2026-11-24T16-02-39Z`: sortable, and no character a file system refuses. */
function setAsideName(file: string, now: number): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
  let name = `${file}.corrupt-${stamp}`;
  for (let i = 2; existsSync(name); i++) name = `${file}.corrupt-${stamp}-${i}`;
  return name;
}

/** The databases of a workspace set aside as damaged (this run or an earlier one), oldest first. */
export function setAsideCopies(workspaceDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(workspaceDir);
  } catch {
    return [];
  }
  return names.filter((n) => /^(memory|schedules|usage)\.db\.corrupt-[^.]*$/.test(n) && !/-(wal|shm)$/.test(n)).sort();
}
