/**
 * The SQLite long-term memory database (`workspace/memory.db`, seed 003): better-sqlite3 in
 * WAL mode, schema deployed by the numbered migrations of migrations.ts, FTS5 kept in
 * step by triggers, and `sqlite-vec` loaded when installed. Opening never throws at the
 * daemon: a locked or corrupt file is reported so the caller can disable the index and chat on.
 */
import Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { preparePrivateFileSync } from '../../core/private.js';
import { migrate } from './migrations.js';

export type Db = Database.Database;

export interface OpenedDb {
  db: Db;
  /** sqlite-vec loaded into this connection. */
  vec: boolean;
  vecError?: string;
}

/** Loads sqlite-vec when the package is installed; returns why not otherwise. */
export function loadVec(db: Db): { ok: boolean; error?: string } {
  try {
    const require = createRequire(import.meta.url);
    const sqliteVec = require('sqlite-vec') as { load: (db: Db) => void };
    sqliteVec.load(db);
    return { ok: true };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

export function openDatabase(file: string): OpenedDb {
  if (file !== ':memory:') {
    // Private before SQLite opens it: SQLite creates files 0644 by default and gives -wal and
    // -shm the mode of the database file, so a 0600 memory.db keeps all three private.
    preparePrivateFileSync(file);
    preparePrivateFileSync(`${file}-wal`, false);
    preparePrivateFileSync(`${file}-shm`, false);
  }
  // A short busy timeout: a lock held by another process pauses the index (see MemoryIndex),
  // it must not stall every chat for seconds on each message.
  const db = new Database(file, { timeout: 250 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = OFF');
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  const vec = loadVec(db);
  return { db, vec: vec.ok, ...(vec.error ? { vecError: vec.error } : {}) };
}
