/**
 * The SQLite side of PgMemoryIndex: the cache file is an ordinary memory.db (SqliteMemoryIndex,
 * the same ranking code) plus an outbox of what this process changed and has not yet written to
 * PostgreSQL, and the feed position it has applied up to.
 *
 * The outbox is filled by triggers on the cache's own tables, in the same SQLite transaction as
 * the change, so no write path can forget it (a search noting access to facts, decay, purge…).
 * It holds keys only; what is written to PostgreSQL is the row as the cache has it then, or its
 * absence (a delete). `v` grows with each change of a key, so an entry changed again while its
 * batch was being written stays for the next batch.
 */
import type { Db } from '../store/db.js';
import type { StoredMemory } from '../store/repository.js';
import { MEMORY_COLUMNS, type SessionMark } from '../store/rows.js';
import { eraseMemories } from '../store/erase.js';
import { getMeta, setMeta } from '../store/migrations.js';
import type { SqliteMemoryIndex } from '../sqlite-memory-index.js';

export type ChangeKind = 'memory' | 'session' | 'meta' | 'vector';

export interface OutboxEntry {
  kind: ChangeKind;
  key: string;
  /** First stored here (an insert in PostgreSQL), not only changed. */
  inserted: boolean;
  v: number;
}

/** The current state of the keys a batch of changes names; null: gone. */
export interface FeedState {
  memories: Map<string, StoredMemory | null>;
  sessions: Map<string, SessionMark | null>;
  meta: Map<string, string | null>;
  vectors: Map<string, Buffer | null>;
}

/** Cache metadata that is this file's own, never written to PostgreSQL. */
export const CURSOR_KEY = 'pg_cursor';
export const IDENTITY_KEY = 'pg_identity';

/** A trigger that notes a change of `key` (a column of the row, `new.` or `old.`) in the outbox. */
function noting(name: string, event: string, table: string, kind: ChangeKind, key: string, when = ''): string {
  const inserted = event === 'INSERT' && kind === 'memory';
  return `CREATE TRIGGER IF NOT EXISTS ${name} AFTER ${event} ON ${table} ${when} BEGIN
    INSERT INTO pg_outbox (kind, key, inserted) VALUES ('${kind}', ${key}, ${inserted ? 1 : 0})
      ON CONFLICT DO UPDATE SET v = v + 1${inserted ? ', inserted = 1' : ''};
  END;`;
}

/** Metadata that is the file's own (its schema version, its feed position) is not written out. */
const SHARED_META = "WHEN new.key <> 'schema_version' AND new.key NOT LIKE 'pg\\_%' ESCAPE '\\'";

const OUTBOX = [
  // In the order first noted (rowid): memories reach PostgreSQL in the order they were stored
  // here, which a rebuilt cache follows, so even ties in ranking fall the same way.
  `CREATE TABLE IF NOT EXISTS pg_outbox (
    kind TEXT NOT NULL, key TEXT NOT NULL, inserted INTEGER NOT NULL DEFAULT 0, v INTEGER NOT NULL DEFAULT 1,
    UNIQUE (kind, key)
  );`,
  noting('pg_memories_ai', 'INSERT', 'memories', 'memory', 'new.id'),
  // The columns a memory changes by (content never does; entity_ids are the cache's own).
  noting('pg_memories_au', 'UPDATE OF valid_until, confidence, access_count, last_accessed, decay_rate, attributes', 'memories', 'memory', 'new.id'),
  noting('pg_memories_ad', 'DELETE', 'memories', 'memory', 'old.id'),
  noting('pg_sessions_ai', 'INSERT', 'sessions_consolidations', 'session', 'new.session_id'),
  noting('pg_sessions_au', 'UPDATE', 'sessions_consolidations', 'session', 'new.session_id'),
  noting('pg_sessions_ad', 'DELETE', 'sessions_consolidations', 'session', 'old.session_id'),
  noting('pg_meta_ai', 'INSERT', 'memory_metadata', 'meta', 'new.key', SHARED_META),
  noting('pg_meta_au', 'UPDATE', 'memory_metadata', 'meta', 'new.key', SHARED_META),
].join('\n');

const hasVecTable = (db: Db) => db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_memories'").get() !== undefined;

/** The cache file's outbox and feed position; the cache index must stay open while this is used. */
export class CacheTables {
  readonly db: Db;

  constructor(readonly index: SqliteMemoryIndex) {
    this.db = index.database!;
    this.db.exec(OUTBOX);
  }

  /** Records that these memories' vectors changed (vec0 tables take no triggers). */
  vectorsChanged(ids: string[]): void {
    const add = this.db.prepare("INSERT INTO pg_outbox (kind, key) VALUES ('vector', ?) ON CONFLICT DO UPDATE SET v = v + 1");
    this.db.transaction(() => ids.forEach((id) => add.run(id)))();
  }

  pending(max: number): OutboxEntry[] {
    const rows = this.db.prepare('SELECT kind, key, inserted, v FROM pg_outbox ORDER BY rowid LIMIT ?').all(max) as Array<{
      kind: ChangeKind;
      key: string;
      inserted: number;
      v: number;
    }>;
    return rows.map((r) => ({ kind: r.kind, key: r.key, inserted: r.inserted === 1, v: r.v }));
  }

  /** These entries are written: removed unless changed again since they were read. */
  written(entries: OutboxEntry[]): void {
    const del = this.db.prepare('DELETE FROM pg_outbox WHERE kind = ? AND key = ? AND v = ?');
    this.db.transaction(() => entries.forEach((e) => del.run(e.kind, e.key, e.v)))();
  }

  /** Forgets every unwritten change (a cache of another database). */
  dropOutbox(): void {
    this.db.exec('DELETE FROM pg_outbox');
  }

  memory(id: string): StoredMemory | undefined {
    return this.db.prepare(`SELECT ${MEMORY_COLUMNS.join(', ')} FROM memories WHERE id = ?`).get(id) as StoredMemory | undefined;
  }

  session(id: string): SessionMark | undefined {
    return this.db.prepare('SELECT session_id, scope, first_seen_at, consolidated_at FROM sessions_consolidations WHERE session_id = ?').get(id) as
      | SessionMark
      | undefined;
  }

  meta(key: string): string | undefined {
    return getMeta(this.db, key);
  }

  vector(id: string): Buffer | undefined {
    if (!hasVecTable(this.db)) return undefined;
    return (this.db.prepare('SELECT embedding FROM vec_memories WHERE memory_id = ?').get(id) as { embedding: Buffer } | undefined)?.embedding;
  }

  get cursor(): number {
    return Number(getMeta(this.db, CURSOR_KEY) ?? '0');
  }

  get identity(): string | undefined {
    return getMeta(this.db, IDENTITY_KEY);
  }

  /** Marks the cache as a mirror of this database, applied up to `cursor`. */
  mark(identity: string, cursor: number): void {
    this.db.transaction(() => {
      setMeta(this.db, IDENTITY_KEY, identity);
      setMeta(this.db, CURSOR_KEY, String(cursor));
    })();
  }

  /**
   * Writes the database's current state of the keys a batch of changes names, and the feed
   * position after it, in one transaction. A key with an unwritten local change is left as it is
   * here: its own write makes another change, which brings the merged row back. Returns whether a
   * memory was deleted (the cache is scrubbed then).
   */
  apply(state: FeedState, cursor: number): { erased: boolean } {
    const db = this.db;
    const mine = new Set((db.prepare('SELECT kind, key FROM pg_outbox').all() as Array<{ kind: string; key: string }>).map((r) => `${r.kind}\n${r.key}`));
    const skip = (kind: ChangeKind, key: string) => mine.has(`${kind}\n${key}`);
    let erased = false;
    const update = db.prepare(
      'UPDATE memories SET valid_until = @valid_until, confidence = @confidence, access_count = @access_count, last_accessed = @last_accessed, decay_rate = @decay_rate, attributes = @attributes WHERE id = @id',
    );
    db.transaction(() => {
      const fresh: StoredMemory[] = [];
      for (const [id, row] of state.memories) {
        if (skip('memory', id)) continue;
        const local = db.prepare('SELECT content, valid_until FROM memories WHERE id = ?').get(id) as
          | { content: string; valid_until: number | null }
          | undefined;
        if (row === null) {
          if (local) erased = eraseMemories(db, [{ id, content: local.content }]) > 0 || erased;
        } else if (!local) {
          fresh.push(row);
        } else {
          update.run(row);
          // Retired elsewhere: its links and vector go, as correct_fact and decay do here.
          if (local.valid_until === null && row.valid_until !== null) {
            db.prepare('DELETE FROM memory_entities WHERE memory_id = ?').run(id);
            if (hasVecTable(db)) db.prepare('DELETE FROM vec_memories WHERE memory_id = ?').run(id);
          }
        }
      }
      this.index.restore(fresh);
      for (const [id, mark] of state.sessions) {
        if (skip('session', id)) continue;
        if (mark === null) db.prepare('DELETE FROM sessions_consolidations WHERE session_id = ?').run(id);
        else
          db.prepare(
            `INSERT INTO sessions_consolidations (session_id, scope, first_seen_at, consolidated_at) VALUES (@session_id, @scope, @first_seen_at, @consolidated_at)
             ON CONFLICT (session_id) DO UPDATE SET scope = excluded.scope, first_seen_at = excluded.first_seen_at, consolidated_at = excluded.consolidated_at`,
          ).run(mark);
      }
      for (const [key, value] of state.meta) {
        if (skip('meta', key)) continue;
        if (value === null) db.prepare('DELETE FROM memory_metadata WHERE key = ?').run(key);
        else setMeta(db, key, value);
      }
      this.applyVectors(state.vectors, skip);
      // The triggers noted what was just written as changed here: it is not.
      const drop = db.prepare('DELETE FROM pg_outbox WHERE kind = ? AND key = ?');
      for (const [kind, keys] of [
        ['memory', state.memories],
        ['session', state.sessions],
        ['meta', state.meta],
      ] as const) {
        for (const key of keys.keys()) if (!skip(kind, key)) drop.run(kind, key);
      }
      setMeta(db, CURSOR_KEY, String(cursor));
    })();
    return { erased };
  }

  /** Vectors of memories the cache holds, when it has a vector table (made at the stored size if sqlite-vec is loaded). */
  private applyVectors(vectors: Map<string, Buffer | null>, skip: (kind: ChangeKind, key: string) => boolean): void {
    if (vectors.size === 0) return;
    const db = this.db;
    const dims = Number(getMeta(db, 'embedding_dimensions') ?? '0');
    if (!hasVecTable(db) && this.index.vecLoaded && dims > 0) this.index.vectors!.create(dims);
    if (!hasVecTable(db)) return;
    const has = db.prepare('SELECT 1 FROM memories WHERE id = ?');
    const put: Array<{ id: string; vector: Buffer }> = [];
    for (const [id, vector] of vectors) {
      if (skip('vector', id)) continue;
      if (vector === null) db.prepare('DELETE FROM vec_memories WHERE memory_id = ?').run(id);
      else if (has.get(id)) put.push({ id, vector });
    }
    this.index.vectors!.store(put);
  }
}
