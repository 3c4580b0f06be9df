/**
 * The SQLite long-term memory database (`workspace/memory.db`, seed 003): better-sqlite3 in
 * WAL mode, schema deployed by the numbered migrations of migrations.ts, FTS5 kept in
 * step by triggers, and `sqlite-vec` loaded when installed.
 */
import { createRequire } from 'node:module';
import type { Logger } from '../../core/log.js';
import { openSqlite, type Db } from '../../storage/sqlite.js';
import { migrate } from './migrations.js';

export type { Db } from '../../storage/sqlite.js';

export interface OpenedDb {
  db: Db;
  /** sqlite-vec loaded into this connection. */
  vec: boolean;
  vecError?: string;
  /** The damaged file's copy, when it was set aside and this one started empty. */
  setAside?: string;
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

/**
 * Opens memory.db through the one SQLite opener (storage/sqlite.ts): a damaged file is set aside
 * and an empty index started. A locked file or one from a newer program throws, and the caller
 * turns the index off.
 */
export function openDatabase(file: string, log: Logger): OpenedDb {
  const opened = openSqlite(file, {
    // A short busy timeout: a lock held by another process pauses the index (see outage.ts),
    // it must not stall every chat for seconds on each message.
    busyTimeoutMs: 250,
    synchronous: 'NORMAL',
    setup: (db) => {
      db.pragma('foreign_keys = OFF');
      migrate(db);
      // Probe: a damaged file can open fine and fail on first read. (Not a quick_check: that
      // reads every page, seconds at a million memories, at every start.)
      db.prepare('SELECT COUNT(*) FROM memories').get();
    },
    log,
  });
  const vec = loadVec(opened.db);
  return { db: opened.db, vec: vec.ok, ...(vec.error ? { vecError: vec.error } : {}), ...(opened.setAside ? { setAside: opened.setAside } : {}) };
}
