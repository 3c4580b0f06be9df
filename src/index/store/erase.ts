/**
 * Taking memories out of `memory.db` for good (/forget, purge). Deleting rows is not enough for
 * "no byte left": FTS5 keeps deleted words in its segments until they are merged, SQLite keeps
 * freed pages with their old bytes, and WAL mode keeps old page images in `memory.db-wal`. So
 * after the deletes both full-text tables are optimized (segments merged, deleted entries
 * dropped), the file is vacuumed (rebuilt without free pages), and the WAL is checkpointed and
 * truncated to zero bytes.
 */
import type { Db } from './db.js';
import { SCOPED_FTS } from './fts.js';
import { contentHash } from './vectors.js';

export interface IndexMatch {
  id: string;
  kind: string;
  content: string;
}

/** Memories of `scope` whose text `matches` (checked here in JS: SQLite's lower() is ASCII-only). */
export function findMatching(db: Db, scope: string, matches: (text: string) => boolean): IndexMatch[] {
  const out: IndexMatch[] = [];
  const rows = db.prepare('SELECT id, kind, content FROM memories WHERE scope = ?').iterate(scope) as Iterable<IndexMatch>;
  for (const r of rows) if (matches(r.content)) out.push({ id: r.id, kind: r.kind, content: r.content });
  return out;
}

function hasTable(db: Db, name: string): boolean {
  return db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(name) !== undefined;
}

/**
 * Deletes these memories with their entity links, vectors and cached embeddings (the full-text
 * entries go with them through the delete trigger). Entities left without any link are deleted
 * too. Returns how many memories were deleted.
 */
export function eraseMemories(db: Db, rows: Array<{ id: string; content: string }>): number {
  if (rows.length === 0) return 0;
  const vec = hasTable(db, 'vec_memories');
  let n = 0;
  db.transaction(() => {
    const links = db.prepare('DELETE FROM memory_entities WHERE memory_id = ?');
    const del = db.prepare('DELETE FROM memories WHERE id = ?');
    const cache = db.prepare('DELETE FROM embedding_cache WHERE hash = ?');
    const vdel = vec ? db.prepare('DELETE FROM vec_memories WHERE memory_id = ?') : undefined;
    for (const r of rows) {
      links.run(r.id);
      n += del.run(r.id).changes;
      cache.run(contentHash(r.content));
      vdel?.run(r.id);
    }
    dropOrphanEntities(db);
  })();
  return n;
}

/** Entities no memory links to any more, with their aliases. */
function dropOrphanEntities(db: Db): void {
  db.exec(`
    DELETE FROM entity_aliases WHERE entity_id IN (SELECT id FROM entities WHERE id NOT IN (SELECT entity_id FROM memory_entities));
    DELETE FROM entities WHERE id NOT IN (SELECT entity_id FROM memory_entities);
  `);
}

/**
 * Entities whose name or an alias `matches` and that no other scope links to: deleted with
 * their aliases and this scope's links (a memory that mentioned one keeps its text, which did
 * not contain the words). Another chat's entity of the same name is that chat's data and stays.
 */
export function eraseEntities(db: Db, scope: string, matches: (text: string) => boolean): number {
  const rows = db.prepare('SELECT id, canonical_name AS name, aliases FROM entities').all() as Array<{ id: string; name: string; aliases: string }>;
  const others = db.prepare('SELECT 1 FROM memory_entities WHERE entity_id = ? AND (scope IS NULL OR scope <> ?) LIMIT 1');
  const aliasRows = db.prepare('SELECT alias FROM entity_aliases WHERE entity_id = ?');
  let n = 0;
  db.transaction(() => {
    for (const e of rows) {
      const names = [e.name, e.aliases, ...(aliasRows.all(e.id) as Array<{ alias: string }>).map((a) => a.alias)];
      if (!names.some((x) => matches(x))) continue;
      if (others.get(e.id, scope)) continue;
      db.prepare('DELETE FROM memory_entities WHERE entity_id = ?').run(e.id);
      db.prepare('DELETE FROM entity_aliases WHERE entity_id = ?').run(e.id);
      db.prepare('DELETE FROM entities WHERE id = ?').run(e.id);
      n++;
    }
  })();
  return n;
}

/** Every row of one scope (purge): memories, links, vectors, cached embeddings, consolidation marks, its FTS code. */
export function eraseScope(db: Db, scope: string): { memories: number } {
  const rows = db.prepare('SELECT id, content FROM memories WHERE scope = ?').all(scope) as Array<{ id: string; content: string }>;
  const memories = eraseMemories(db, rows);
  db.transaction(() => {
    db.prepare('DELETE FROM memory_entities WHERE scope = ?').run(scope);
    dropOrphanEntities(db);
    db.prepare('DELETE FROM sessions_consolidations WHERE scope = ?').run(scope);
    db.prepare('DELETE FROM fts_scopes WHERE scope = ?').run(scope);
    // Entities, their aliases and the chat's speakers are per scope (schema v4, v5).
    db.prepare('DELETE FROM entity_aliases WHERE scope = ?').run(scope);
    db.prepare('DELETE FROM entities WHERE scope = ?').run(scope);
    db.prepare('DELETE FROM scope_speakers WHERE scope = ?').run(scope);
  })();
  return { memories };
}

/** Every scope that has rows in any table (purge finds a group's forum topics among them). */
export function listScopes(db: Db): string[] {
  const rows = db
    .prepare(
      `SELECT scope FROM memories UNION SELECT scope FROM memory_entities UNION SELECT scope FROM sessions_consolidations UNION SELECT scope FROM fts_scopes
       UNION SELECT scope FROM entities UNION SELECT scope FROM entity_aliases UNION SELECT scope FROM scope_speakers`,
    )
    .all() as Array<{ scope: string | null }>;
  return rows.flatMap((r) => (r.scope === null ? [] : [r.scope]));
}

/** Leaves no deleted byte in memory.db or its WAL (see the top of this file). Slow on a big file; only for forget and purge. */
export function scrubFreedSpace(db: Db): void {
  db.exec("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')");
  db.exec(`INSERT INTO ${SCOPED_FTS}(${SCOPED_FTS}) VALUES ('optimize')`);
  db.pragma('secure_delete = ON');
  db.exec('VACUUM');
  truncateWal(db);
}

/** How long the scrub waits for a checkpoint another connection is running (the worker of checkpointer.ts). */
const TRUNCATE_WAIT_MS = 30_000;

/**
 * `wal_checkpoint(TRUNCATE)`, again until no other checkpoint was in the way: SQLite never
 * calls the busy handler for the checkpoint lock, it reports busy at once, and the worker's
 * PASSIVE checkpoint of a freshly vacuumed file can take seconds.
 */
export function truncateWal(db: Db): void {
  const deadline = Date.now() + TRUNCATE_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    if (!row || row.busy === 0 || Date.now() >= deadline) return;
    Atomics.wait(pause, 0, 0, 20);
  }
}

/** The erasing operations bound to one open file (MemoryIndex.erase); they throw on failure. */
export class IndexEraser {
  constructor(private readonly db: Db) {}

  matching(scope: string, matches: (text: string) => boolean): IndexMatch[] {
    return findMatching(this.db, scope, matches);
  }

  /** These memories, then the scope's entities whose names match; how many were deleted. */
  memoriesAndEntities(rows: Array<{ id: string; content: string }>, scope: string, matches: (text: string) => boolean): number {
    return eraseMemories(this.db, rows) + eraseEntities(this.db, scope, matches);
  }

  scope(scope: string): { memories: number } {
    return eraseScope(this.db, scope);
  }

  scopes(): string[] {
    return listScopes(this.db);
  }

  scrub(): void {
    scrubFreedSpace(this.db);
  }
}
